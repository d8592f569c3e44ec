"""The MCP shell: the only module that imports ``mcp``. It registers ``router_call``, validates its
arguments through the pydantic model (which also generates the schema the host sees), calls the
router, and shapes the result or the error. No provider names, retries or wire formats here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from colibri_router import __version__
from colibri_router.errors import ColibriError
from colibri_router.logs import get_logger
from colibri_router.router import open_http_client, route
from colibri_router.schema import RouterCallInput, RouterCallResult

SERVER_NAME = "colibri-router"
TOOL_NAME = "router_call"
TOOL_DESCRIPTION = """\
Send a prompt, or a whole conversation with optional tool definitions, to another model: Moonshot's \
Kimi K2 or Anthropic's Claude. Returns the answer normalized: content, tool_calls, thinking, model, \
token usage, latency and stop reason, plus `message`, the assistant turn to append to `messages` for \
the next call. Tool loops can switch provider at any turn; tool-call IDs are provider-neutral.\
"""
INSTRUCTIONS = (
    "Use router_call to consult Kimi K2 or Claude. For a tool loop: pass `messages` and `tools`, run the "
    "returned tool_calls yourself, append the result's `message` and a user turn of tool_result blocks, "
    "and call again."
)


@dataclass(frozen=True, slots=True)
class ServerState:
    http: httpx.AsyncClient


@asynccontextmanager
async def lifespan(_: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
    async with open_http_client() as http:
        yield ServerState(http=http)


class RouterCallArguments(RouterCallInput, ArgModelBase):
    """The SDK validates arguments with this model and hands the validated model to the tool."""

    model_config = ConfigDict(title="router_call arguments")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": self}


async def router_call(arguments: RouterCallInput, ctx: Context[ServerState, Any]) -> CallToolResult:
    state = ctx.request_context.lifespan_context

    async def notify(progress: float, message: str) -> None:
        # A no-op when the host asked for no progress; whether it asked depends on the transport
        # (a token in _meta on JSON-RPC, a callback in memory), which the SDK already knows.
        await ctx.report_progress(progress, None, message)

    try:
        result = await route(arguments, client=state.http, notify=notify)
    except ColibriError as error:
        get_logger(__name__).warning("router_call failed", code=error.code, status=error.status, error=error.message)
        return error_result(error.code, error.message)
    except Exception:
        get_logger(__name__).exception("router_call crashed")
        return error_result("INTERNAL_ERROR", "unexpected failure inside colibri-router; see the server log")
    return success_result(result)


def success_result(result: RouterCallResult) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=result.content)],
        structured_content=result.model_dump(mode="json"),
    )


def error_result(code: str, message: str) -> CallToolResult:
    """Built by hand: the SDK's ToolError would prefix "Error executing tool" before our code."""
    return CallToolResult(content=[TextContent(type="text", text=f"{code}: {message}")], is_error=True)


def router_call_tool() -> Tool:
    return Tool(
        fn=router_call,
        name=TOOL_NAME,
        title="Route to Kimi K2 or Claude",
        description=TOOL_DESCRIPTION,
        parameters=RouterCallArguments.model_json_schema(by_alias=True),
        fn_metadata=FuncMetadata(arg_model=RouterCallArguments, output_model=RouterCallResult),
        is_async=True,
        context_kwarg="ctx",
        annotations=ToolAnnotations(
            read_only_hint=True,  # it changes nothing on the user's machine
            open_world_hint=True,  # it talks to services outside it
            destructive_hint=False,
            idempotent_hint=False,
        ),
    )


def build_server() -> MCPServer[ServerState]:
    return MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=[router_call_tool()],
        lifespan=lifespan,
    )
