"""The shell's side of jobs (:mod:`colibri_router.jobs`): a long tool's result becomes a job's
:class:`~colibri_router.jobs.model.Final` and back, and the call runs through the job runner unless
its ``background`` is ``false``. The runner never sees an MCP type."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.types import CallToolResult, TextContent

from colibri_router.callers import Notify
from colibri_router.errors import ConfigError
from colibri_router.jobs.model import Background, Final
from colibri_router.jobs.runner import RUNNER
from colibri_router.server.results import success_result
from colibri_router.settings import load_settings

Run = Callable[[Notify], Awaitable[CallToolResult]]


def final_of(result: CallToolResult) -> Final:
    [block] = result.content
    assert isinstance(block, TextContent)
    assert result.structured_content is not None
    return Final(structured=result.structured_content, text=block.text, is_error=result.is_error)


def result_of(final: Final) -> CallToolResult:
    """The result exactly as the call answered it (the text block is the one it sent)."""
    return CallToolResult(
        content=[TextContent(type="text", text=final.text)],
        structured_content=final.structured,
        is_error=final.is_error,
    )


async def answer(tool: str, principal: str, background: Background, run: Run, notify: Notify) -> CallToolResult:
    """``run`` (the call, its result shaped) as a job that may hand off, or inline when ``background``
    is false or the settings cannot be read (the call then fails with their error, as it would)."""
    try:
        settings = load_settings()
    except ConfigError:
        settings = None
    if background is False or settings is None:
        return await run(notify)

    async def work(job_notify: Notify) -> Final:
        return final_of(await run(job_notify))

    outcome = await RUNNER.call(tool, principal, background, work, notify, settings=settings)
    return result_of(outcome) if isinstance(outcome, Final) else success_result(outcome)
