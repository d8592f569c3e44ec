"""A tool call's path, loaded by the first call (:mod:`.tools` imports it there, not at start-up:
some hosts stop waiting for a server that is slow to answer ``initialize``): the MCP session the call
runs in (:mod:`.sampling`), its progress, its cancellation, a long tool's job (:mod:`.handoff`) and
the result or error result the host reads (:mod:`.results`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult

from colibri_router import observability
from colibri_router.callers import Caller, Notify
from colibri_router.errors import ColibriError
from colibri_router.jobs.final import Background, Final
from colibri_router.logs import get_logger
from colibri_router.outcomes import internal_error
from colibri_router.server.handoff import answer as handoff
from colibri_router.server.handoff import result_of
from colibri_router.server.identity import caller, caller_name
from colibri_router.server.inflight import IN_FLIGHT, call_key
from colibri_router.server.results import error_result, success_result
from colibri_router.server.sampling import answer_in_session, round_context
from colibri_router.session import McpSession, in_session

# A tool's answer: its result, or on a 2026-07-28 connection the host's model to ask first (see .sampling).
ToolAnswer = CallToolResult | InputRequiredResult

# The JSON-RPC error the SDK's transport answers a cancelled request with.
REQUEST_CANCELLED = -32800
# A tool call's log lines keep the logger name they had before this path left .tools.
_LOGGER = "colibri_router.server.tools"


def _notifier(ctx: Context[Any, Any]) -> Notify:
    async def notify(progress: float, message: str, total: float | None) -> None:
        # A no-op when the host asked for no progress; whether it asked depends on the transport
        # (a token in _meta on JSON-RPC, a callback in memory), which the SDK already knows.
        # A 2026-07-28 call that asked the host's model reports on the stream of its latest round.
        await round_context(ctx).report_progress(progress, total, message)

    return notify


# A tool's work for a caller, its progress going to the notifier given, in the MCP session the request
# came in on.
Work = Callable[[Caller, Notify, McpSession], Awaitable[Any]]


async def answer(
    tool: str, ctx: Context[Any, Any], work: Work, sparse: bool, background: Background | None
) -> ToolAnswer:
    """Run ``work`` for the request's caller, in the MCP session its client and protocol era allow (a
    2026-07-28 call that asks the host's model answers in rounds, see :mod:`.sampling`)."""
    return await answer_in_session(
        ctx,
        over_http=_over_http(ctx),
        run=lambda session: _run(tool, ctx, work, session, sparse, background=background),
    )


async def _run(
    tool: str,
    ctx: Context[Any, Any],
    work: Work,
    session: McpSession,
    sparse: bool,
    *,
    background: Background | None,
) -> CallToolResult:
    """Run ``work`` for the request's caller, cancellable by (caller, request id), and shape its result;
    a long tool (``background`` not None) runs as a job that may hand off (:mod:`.handoff`)."""
    name = caller_name()
    notify = _notifier(ctx)
    with (
        observability.tool_call(tool, name, ctx.headers),
        IN_FLIGHT.track(call_key(name, ctx.request_context.request_id)) as scope,
        in_session(session),
    ):
        if background is None:
            return await _shaped(tool, lambda: work(caller(name), notify, session), sparse)

        async def shaped(job_notify: Notify) -> CallToolResult:
            return await _shaped(tool, lambda: work(caller(name), job_notify, session), sparse)

        try:
            return await handoff(tool, name, background, shaped, notify)
        except ColibriError as error:  # the job's row could not be written
            return _failed(tool, error)
    # Only a cancellation routed through IN_FLIGHT gets here: answer it as the SDK answers its own.
    assert scope.cancelled_caught
    raise MCPError(code=REQUEST_CANCELLED, message="Request cancelled")


async def _shaped(tool: str, call: Callable[[], Awaitable[Any]], sparse: bool) -> CallToolResult:
    """The tool's result as the host reads it, or its error result; a job's stored result (router_job)
    exactly as it was answered."""
    try:
        result = await call()
    except ColibriError as error:
        return _failed(tool, error)
    except Exception:
        get_logger(_LOGGER).exception(f"{tool} crashed")
        return error_result(internal_error())
    if isinstance(result, Final):
        return result_of(result)
    return success_result(result, sparse=sparse)


def _failed(tool: str, error: ColibriError) -> CallToolResult:
    get_logger(_LOGGER).warning(f"{tool} failed", code=error.code, status=error.status, error=error.message)
    return error_result(error)


def _over_http(ctx: Context[Any, Any]) -> bool:
    return ctx.headers is not None
