"""The tools: their arguments validated through the pydantic models (from which the schemas the host
sees were generated, see :mod:`.schemas`), the services called for the caller the request came from,
results and errors shaped. No provider names, retries or wire formats here.

Start-up imports only what ``initialize`` and ``tools/list`` need: the SDK and the published schemas.
The argument models and the router (and with it httpx and every codec) are imported by the first
call, because some hosts stop waiting for a server that is slow to answer ``initialize``. Upstream
calls use the event loop's shared HTTP client (:func:`colibri_router.engine.clients.shared_client`): one per
server run, opened by the first call, closed when the server's loop ends.

Results and errors are shaped in :mod:`.results`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import BaseModel, ValidationError

from colibri_router import __version__, observability
from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.inflight import InFlight, call_key
from colibri_router.logs import get_logger
from colibri_router.providers import provider_names
from colibri_router.server.identity import caller, caller_name
from colibri_router.server.results import error_result, success_result
from colibri_router.server.schemas import published, with_provider_names

SERVER_NAME = "colibri-router"
TOOL_NAME = "router_call"
TOOL_DESCRIPTION = """\
Send a prompt, or a whole conversation with optional tool definitions, to another model: Kimi, \
Claude, GPT, Gemini, Mistral and more, or a command-line agent on the user's own login (claude-code, \
codex, gemini-cli: it reads the project itself, read-only). Returns the answer normalized: content, \
tool_calls, thinking, model, token usage, cost, latency and stop reason. `message` is the assistant turn to append to \
`messages` before the next call; it is null when the model called no tools, and then the turn to \
append is {"role": "assistant", "content": <content>}. Tool loops can switch provider at any turn; \
tool-call IDs are provider-neutral. To show the model files, images or PDFs on disk, pass their paths \
in `files` rather than pasting their content.\
"""
INSTRUCTIONS = (
    "Use router_call to consult another model. For a tool loop: pass `messages` and `tools`, run the "
    "returned tool_calls yourself, append the result's `message` and a user turn of tool_result blocks, "
    "and call again. router_models lists the models that exist."
)

if TYPE_CHECKING:
    from colibri_router.ask_many.schema import RouterAskManyInput
    from colibri_router.call.schema import RouterCallInput
    from colibri_router.callers import Caller
    from colibri_router.schema_tools import RouterModelsInput, RouterRunInput, RouterThreadsInput, RouterUsageInput
    from colibri_router.session import McpSession

# A tool's answer: its result, or on a 2026-07-28 connection the host's model to ask first (see .sampling).
ToolAnswer = CallToolResult | InputRequiredResult
# progress, message, total (None: unknown): what the SDK's progress notification carries.
Notify = Callable[[float, str, float | None], Awaitable[None]]

# The JSON-RPC error the SDK's transport answers a cancelled request with.
REQUEST_CANCELLED = -32800
# This process's running tool calls, for cancellations that arrive over stateless HTTP.
IN_FLIGHT = InFlight()


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
            from colibri_router.server.arguments import ARGUMENTS

            self.arg_model = ARGUMENTS[self.tool]
        try:
            return super().validate_arguments(arguments_to_validate)
        except ValidationError as error:
            from colibri_router.errors.invalid import invalid_arguments

            return {"arguments": invalid_arguments(error, self.pre_parse_json(arguments_to_validate))}


def _refusing_invalid(
    tool: str, fn: Callable[[Any, Context[Any, Any]], Awaitable[ToolAnswer]]
) -> Callable[[Any, Context[Any, Any]], Awaitable[ToolAnswer]]:
    """``fn``, answering arguments that failed their model with the error result every failure has."""

    @functools.wraps(fn)
    async def run(arguments: Any, ctx: Context[Any, Any]) -> ToolAnswer:
        if isinstance(arguments, InvalidRequestError):
            get_logger(__name__).warning(f"{tool} refused its arguments", code=arguments.code, error=arguments.message)
            return error_result(arguments)
        return await fn(arguments, ctx)

    return run


def _notifier(ctx: Context[Any, Any]) -> Notify:
    async def notify(progress: float, message: str, total: float | None) -> None:
        # A no-op when the host asked for no progress; whether it asked depends on the transport
        # (a token in _meta on JSON-RPC, a callback in memory), which the SDK already knows.
        # A 2026-07-28 call that asked the host's model reports on the stream of its latest round.
        from colibri_router.server.sampling import round_context

        await round_context(ctx).report_progress(progress, total, message)

    return notify


async def _answer(
    tool: str, ctx: Context[Any, Any], work: Callable[[Caller], Awaitable[BaseModel | dict[str, Any]]]
) -> ToolAnswer:
    """Run ``work`` for the request's caller, in the MCP session its client and protocol era allow (a
    2026-07-28 call that asks the host's model answers in rounds, see :mod:`.sampling`)."""
    from colibri_router.server.sampling import answer_in_session

    return await answer_in_session(ctx, over_http=_over_http(ctx), run=lambda session: _run(tool, ctx, work, session))


async def _run(
    tool: str,
    ctx: Context[Any, Any],
    work: Callable[[Caller], Awaitable[BaseModel | dict[str, Any]]],
    session: McpSession,
) -> CallToolResult:
    """Run ``work`` for the request's caller, cancellable by (caller, request id), and shape its result."""
    from colibri_router.session import in_session

    name = caller_name()
    with (
        observability.tool_call(tool, name, ctx.headers),
        IN_FLIGHT.track(call_key(name, ctx.request_context.request_id)) as scope,
        in_session(session),
    ):
        try:
            return success_result(await work(caller(name)))
        except ColibriError as error:
            get_logger(__name__).warning(f"{tool} failed", code=error.code, status=error.status, error=error.message)
            return error_result(error)
        except Exception:
            from colibri_router.errors.outcomes import internal_error

            get_logger(__name__).exception(f"{tool} crashed")
            return error_result(internal_error())
    # Only a cancellation routed through IN_FLIGHT gets here: answer it as the SDK answers its own.
    assert scope.cancelled_caught
    raise MCPError(code=REQUEST_CANCELLED, message="Request cancelled")


def _over_http(ctx: Context[Any, Any]) -> bool:
    return ctx.headers is not None


async def router_call(arguments: RouterCallInput, ctx: Context[Any, Any]) -> ToolAnswer:
    from colibri_router.call.service import serve  # here, not at start-up: see the module docstring

    notify = _notifier(ctx)
    return await _answer(
        "router_call",
        ctx,
        lambda who: serve(
            arguments,
            principal=who.name,
            notify=lambda progress, message: notify(progress, message, None),
        ),
    )


async def router_ask_many(arguments: RouterAskManyInput, ctx: Context[Any, Any]) -> ToolAnswer:
    from colibri_router.ask_many.service import ask_many

    return await _answer(
        "router_ask_many",
        ctx,
        lambda who: ask_many(arguments, principal=who.name, notify=_notifier(ctx)),
    )


async def router_models(arguments: RouterModelsInput, ctx: Context[Any, Any]) -> ToolAnswer:
    from colibri_router.catalog.service import list_models

    return await _answer("router_models", ctx, lambda _: list_models(arguments))


async def router_threads(arguments: RouterThreadsInput, ctx: Context[Any, Any]) -> ToolAnswer:
    from colibri_router.history.service import threads

    return await _answer("router_threads", ctx, lambda who: threads(arguments, caller=who))


async def router_usage(arguments: RouterUsageInput, ctx: Context[Any, Any]) -> ToolAnswer:
    from colibri_router.history.service import usage

    return await _answer("router_usage", ctx, lambda who: usage(arguments, caller=who))


async def router_run(arguments: RouterRunInput, ctx: Context[Any, Any]) -> ToolAnswer:
    from colibri_router.testing.service import run_for_tool

    return await _answer(
        "router_run",
        ctx,
        lambda who: run_for_tool(arguments, principal=who.name, files=not _over_http(ctx), notify=_notifier(ctx)),
    )


def _tool(
    fn: Callable[..., Awaitable[ToolAnswer]],
    *,
    name: str,
    title: str,
    description: str,
    annotations: ToolAnnotations,
    schemas: dict[str, dict[str, Any]],
) -> Tool:
    """``schemas``: every tool's published input and output schema (see :mod:`.schemas`)."""
    return Tool(
        fn=_refusing_invalid(name, fn),
        name=name,
        title=title,
        description=description,
        parameters=schemas[name]["input"],
        # The output schema without the output model: given the model, the SDK would validate every
        # result we built from that very model a second time (a dict → model round trip per call).
        fn_metadata=_ArgumentsOnFirstCall(tool=name, arg_model=ArgModelBase, output_schema=schemas[name]["output"]),
        is_async=True,
        context_kwarg="ctx",
        annotations=annotations,
    )


def tools() -> list[Tool]:
    schemas = published()
    with_provider_names(schemas[TOOL_NAME]["input"], provider_names())
    reads_outside = ToolAnnotations(read_only_hint=True, open_world_hint=True, destructive_hint=False)
    return [
        _tool(
            router_call,
            name=TOOL_NAME,
            schemas=schemas,
            title="Route to another model",
            description=TOOL_DESCRIPTION,
            # It changes nothing on the user's machine and talks to services outside it.
            annotations=ToolAnnotations(
                read_only_hint=True, open_world_hint=True, destructive_hint=False, idempotent_hint=False
            ),
        ),
        _tool(
            router_ask_many,
            name="router_ask_many",
            schemas=schemas,
            title="Ask several models at once",
            description="Ask 2-8 models the same thing in parallel (router_call's input, `models` instead of "
            "`model`): every answer in order, or its error. With `judge`: a verdict on the anonymised answers "
            "(synthesis, agreement 0-1). One deadline for all; max_cost_usd and budgets count every model "
            "and the judge.",
            annotations=ToolAnnotations(
                read_only_hint=True, open_world_hint=True, destructive_hint=False, idempotent_hint=False
            ),
        ),
        _tool(
            router_models,
            name="router_models",
            schemas=schemas,
            title="List providers and models",
            description="List each provider (whether its key is set, its default model) and the model names and "
            "aliases router_call accepts. live: also ask each configured provider's model list.",
            annotations=reads_outside,
        ),
        _tool(
            router_threads,
            name="router_threads",
            schemas=schemas,
            title="Stored conversation threads",
            description="List your stored router_call threads (newest first), get one's messages, or delete one.",
            annotations=ToolAnnotations(
                read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
            ),
        ),
        _tool(
            router_usage,
            name="router_usage",
            schemas=schemas,
            title="What router_call spent",
            description="Totals of your router_call usage (calls, errors, tokens, cost in USD) since "
            "today/7d/30d/all, optionally grouped by provider, model or day.",
            annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False, destructive_hint=False),
        ),
        _tool(
            router_run,
            name="router_run",
            schemas=schemas,
            title="Test an agent scenario on models",
            description="Run an agent-testing scenario (scripted user turns, simulated tools, expectations) on "
            "each of its models; report pass rates, cost and where trajectories differ. Spends money.",
            annotations=ToolAnnotations(
                read_only_hint=False, open_world_hint=True, destructive_hint=False, idempotent_hint=False
            ),
        ),
    ]


def build_server(**http: Any) -> MCPServer[Any]:
    """The server with its tools; ``http`` holds what serving over HTTP adds (auth), see
    :mod:`colibri_router.server.http`."""
    from colibri_router.server.rounds import waiting_calls

    return MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=tools(),
        lifespan=waiting_calls,  # where 2026-07-28 calls wait for the host's model between rounds
        **http,
    )
