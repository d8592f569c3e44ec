"""The tools: their arguments validated through the pydantic models (from which the schemas the host
sees were generated, see :mod:`.schemas`), the services called for the caller the request came from,
results and errors shaped. No provider names, retries or wire formats here.

Start-up imports only what ``initialize`` and ``tools/list`` need: the SDK and the published schemas.
The argument models and the router (and with it httpx and every codec) are imported by the first
call, because some hosts stop waiting for a server that is slow to answer ``initialize``; so is a
call's path past its arguments and its member's policy (:mod:`.calling`). Upstream
calls use the event loop's shared HTTP client (:func:`colibri_router.engine.clients.shared_client`): one per
server run, opened by the first call, closed when the server's loop ends.

Results and errors are shaped in :mod:`.results`.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import ListToolsResult, PaginatedRequestParams
from pydantic import ValidationError

from colibri_router import __version__
from colibri_router.callers import ToolCall
from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.errors.invalid import invalid_arguments
from colibri_router.gateway.member import acting_for
from colibri_router.gateway.shell import admit_tool, member_of_request, visible_tools
from colibri_router.logs import get_logger
from colibri_router.providers import provider_names
from colibri_router.server.identity import caller_name
from colibri_router.server.results import error_result
from colibri_router.server.rounds import WaitingCalls, waiting_calls
from colibri_router.server.schemas import published, with_provider_names
from colibri_router.server.table import TOOLS, ToolEntry, load

SERVER_NAME = "colibri-router"
INSTRUCTIONS = (
    "Use router_call to consult another model. For a tool loop: pass `messages` and `tools`, run the "
    "returned tool_calls yourself, append the result's `message` and a user turn of tool_result blocks, "
    "and call again. router_models lists the models that exist."
)

if TYPE_CHECKING:
    from colibri_router.server.calling import ToolAnswer


class _ArgumentsOnFirstCall(FuncMetadata):
    """The tool's argument model, imported when a call first needs it: start-up publishes the
    precomputed schema (:mod:`.schemas`) and builds no model. The SDK reads ``arg_model`` afresh on
    every call, so setting it once is enough.

    Arguments that fail the model are handed to the tool as an :class:`InvalidRequestError` (see
    :func:`_refusing_invalid`): raised here, the SDK would answer its own text (pydantic's report,
    URLs included) with no code and no structured error."""

    tool: str

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        if self.arg_model is ArgModelBase:
            # Here, not at start-up: building the argument models is most of what tools/list would cost.
            from colibri_router.server.arguments import ARGUMENTS

            self.arg_model = ARGUMENTS[self.tool]
        try:
            return super().validate_arguments(arguments_to_validate)
        except ValidationError as error:
            return {"arguments": invalid_arguments(error, self.pre_parse_json(arguments_to_validate))}


def _refusing_invalid(
    tool: str, fn: Callable[[Any, Context[Any, Any]], Awaitable[ToolAnswer]]
) -> Callable[[Any, Context[Any, Any]], Awaitable[ToolAnswer]]:
    """``fn``, answering arguments that failed their model with the error result every failure has."""

    @functools.wraps(fn)
    async def run(arguments: Any, ctx: Context[Any, Any]) -> ToolAnswer:
        try:  # the member's policy (gateway): a hidden tool, `files`, rpm
            member = member_of_request(caller_name() if _over_http(ctx) else None)
            if member is not None:
                await admit_tool(member, tool, arguments)
        except ColibriError as error:
            get_logger(__name__).warning(f"{tool} refused by the policy", code=error.code, error=error.message)
            return error_result(error)
        if isinstance(arguments, InvalidRequestError):
            get_logger(__name__).warning(f"{tool} refused its arguments", code=arguments.code, error=arguments.message)
            return error_result(arguments)
        with acting_for(member):
            return await fn(arguments, ctx)

    return run


def _over_http(ctx: Context[Any, Any]) -> bool:
    return ctx.headers is not None


def _handler(entry: ToolEntry) -> Callable[[Any, Context[Any, Any]], Awaitable[ToolAnswer]]:
    """The tool's handler: its service (imported by the first call, see the module docstring) called
    for the request's caller."""

    async def handle(arguments: Any, ctx: Context[Any, Any]) -> ToolAnswer:
        return await _call(entry, arguments, ctx)

    handle.__name__ = handle.__qualname__ = entry.name
    return handle


async def _call(entry: ToolEntry, arguments: Any, ctx: Context[Any, Any]) -> ToolAnswer:
    # The call path (sampling, jobs, the error objects) loads with the first call, not at start-up.
    from colibri_router.server.calling import answer

    service = _service(entry.service)
    local_files = not _over_http(ctx)
    background = arguments.background if entry.background else None
    return await answer(
        entry.name,
        ctx,
        lambda who, notify, session: service(arguments, ToolCall(who, notify, local_files, session.ask)),
        entry.sparse,
        background,
    )


_service = functools.cache(load)


def _tool(entry: ToolEntry, schemas: dict[str, dict[str, Any]]) -> Tool:
    """``schemas``: every tool's published input and output schema (see :mod:`.schemas`)."""
    return Tool(
        fn=_refusing_invalid(entry.name, _handler(entry)),
        name=entry.name,
        title=entry.title,
        description=entry.description,
        parameters=schemas[entry.name]["input"],
        # The output schema without the output model: given the model, the SDK would validate every
        # result we built from that very model a second time (a dict → model round trip per call).
        fn_metadata=_ArgumentsOnFirstCall(
            tool=entry.name, arg_model=ArgModelBase, output_schema=schemas[entry.name]["output"]
        ),
        is_async=True,
        context_kwarg="ctx",
        annotations=entry.annotations,
    )


def tools() -> list[Tool]:
    schemas = published()
    for entry in TOOLS:
        if entry.provider_enum:
            with_provider_names(schemas[entry.name]["input"], provider_names())
    return [_tool(entry, schemas) for entry in TOOLS]


class _Server(MCPServer[Any]):
    """``tools/list`` shows a member of a team server only the tools their policy lets them call."""

    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        listed = await super()._handle_list_tools(ctx, params)
        over_http = getattr(ctx.request, "headers", None) is not None
        visible = visible_tools([tool.name for tool in listed.tools], caller_name() if over_http else None)
        return listed.model_copy(update={"tools": [tool for tool in listed.tools if tool.name in visible]})


@asynccontextmanager
async def _lifespan(server: Any) -> AsyncIterator[WaitingCalls]:
    """The server's life: its waiting calls (:mod:`.rounds`), and at its end, the jobs running in this
    process get their grace period (:meth:`colibri_router.jobs.runner.Runner.drain`)."""
    async with waiting_calls(server) as calls:
        try:
            yield calls
        finally:
            runner = sys.modules.get("colibri_router.jobs.runner")  # loaded by the first long call
            if runner is not None:
                await runner.RUNNER.drain()


def build_server(**http: Any) -> MCPServer[Any]:
    """The server with its tools; ``http`` holds what serving over HTTP adds (auth), see
    :mod:`colibri_router.server.http`."""

    return _Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=tools(),
        lifespan=_lifespan,  # 2026-07-28 calls waiting for the host's model; running jobs' grace period
        **http,
    )
