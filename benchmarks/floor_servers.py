"""The floors of benchmarks 9 and 13: the smallest MCP servers on the same SDK.

``trivial``: one tool that answers at once. ``relay``: one tool that makes the same upstream call as
``router_call`` (an httpx stream of the lean upstream's SSE answer, its content deltas joined) and
nothing else: no routing, no ledger, no pricing. Benchmark 9 runs ``python floor_servers.py MODE
PORT UPSTREAM_URL``: stateless Streamable HTTP on ``/mcp`` and ``/healthz``, answering with SSE as
the SDK does by default; ``relay-json`` is the relay in the SDK's JSON-response mode, the shape in
which ``serve --http`` answers a call without a progress token. Benchmark 13 takes
:func:`floor_server` in process.
"""

from __future__ import annotations

import json
import sys

import httpx
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

KEY = "sk-kimi-bench-0123456789"


def floor_server(mode: str, upstream: str) -> MCPServer:
    """The floor's MCP server: its one tool, and ``/healthz``."""
    server = MCPServer(f"floor-{mode}")
    client = httpx.AsyncClient(timeout=60)

    if mode == "trivial":

        @server.tool()
        def router_call(prompt: str) -> str:
            """Answer at once."""
            return f"echo: {prompt}"

    else:

        @server.tool()
        async def router_call(prompt: str) -> str:
            """Relay the prompt upstream and return the streamed answer's text."""
            body = {"model": "kimi-k2-0905-preview", "messages": [{"role": "user", "content": prompt}], "stream": True}
            parts: list[str] = []
            headers = {"Authorization": f"Bearer {KEY}"}
            async with client.stream("POST", f"{upstream}/kimi/v1/chat/completions", json=body, headers=headers) as r:
                async for line in r.aiter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        for choice in json.loads(line[6:]).get("choices", []):
                            parts.append(choice.get("delta", {}).get("content") or "")
            return "".join(parts)

    async def health(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    server.custom_route("/healthz", methods=["GET"])(health)
    return server


def build(mode: str, upstream: str) -> object:
    """The floor as an HTTP app: stateless Streamable HTTP, SSE answers unless ``mode`` ends in ``-json``."""
    tool, _, answers = mode.partition("-")
    return floor_server(tool, upstream).streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=answers == "json"
    )


if __name__ == "__main__":
    mode, port, upstream = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    uvicorn.run(build(mode, upstream), host="127.0.0.1", port=port, log_level="warning")  # type: ignore[arg-type]
