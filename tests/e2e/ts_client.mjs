// Drives colibri-router over stdio with the official TypeScript MCP client (@modelcontextprotocol/sdk,
// the client inside Gemini CLI), which checks every result's structuredContent against the tool's
// outputSchema, error results included (tests/e2e/test_typescript_client.py).
//
// Usage: node ts_client.mjs <node_modules dir> <plan.json>
// plan.json: {"command": "<server executable>", "calls": [{"tool": "...", "arguments": {...}}, ...]}
// The server gets this process's environment. Prints one JSON line per call:
// {"tool", "isError", "code", "text"} when the client accepted the result, {"tool", "rejected"} with
// the client's error message when it refused it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, planPath] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");

const plan = JSON.parse(readFileSync(planPath, "utf8"));
const transport = new StdioClientTransport({ command: plan.command, args: [], env: process.env, stderr: "inherit" });
const client = new Client({ name: "colibri-router-tests", version: "1.0.0" });
await client.connect(transport);
await client.listTools(); // the client keeps each tool's output schema from here

for (const call of plan.calls) {
  try {
    const result = await client.callTool({ name: call.tool, arguments: call.arguments });
    const code = result.structuredContent?.error?.code ?? null;
    const text = result.content?.[0]?.text ?? "";
    console.log(JSON.stringify({ tool: call.tool, isError: Boolean(result.isError), code, text }));
  } catch (error) {
    console.log(JSON.stringify({ tool: call.tool, rejected: String(error?.message ?? error) }));
  }
}
await client.close();
