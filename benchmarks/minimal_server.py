"""The start-up baseline: the smallest MCP server on the same SDK, one trivial tool, on stdio.

Spawned by benchmarks/startup.py with the interpreter that runs colibri-router.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    server.run("stdio")
