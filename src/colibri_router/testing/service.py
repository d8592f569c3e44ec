"""``router_run``'s service: one scenario (an object or a file) run on the router, with a progress
notification per finished run; the report comes back as its canonical JSON. The calls are recorded
for ``principal`` (the caller); a server serving remote callers passes ``files=False``, so that a
caller cannot make it read a path on its disk."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from colibri_router.callers import ToolCall
from colibri_router.errors import InvalidRequestError
from colibri_router.testing.router_caller import RouterCaller
from colibri_router.testing.runner import RunProgress, run_scenario
from colibri_router.testing.scenario import InvalidInput
from colibri_router.testing.tool_input import RouterRunInput

Notify = Callable[[float, str, float | None], Awaitable[None]]


async def for_tool(args: RouterRunInput, call: ToolCall) -> dict[str, Any]:
    """router_run, as the tool table (:mod:`colibri_router.server.table`) calls it: a remote caller's
    scenario cannot be a path on this machine."""
    return await run_for_tool(args, principal=call.caller.name, files=call.local_files, notify=call.notify)


async def run_for_tool(
    args: RouterRunInput, *, principal: str | None = None, files: bool = True, notify: Notify | None = None
) -> dict[str, Any]:

    if args.scenario is None and not files:
        raise InvalidRequestError("scenario_path reads the server's disk, which remote callers cannot: pass scenario")

    async def progress(update: RunProgress) -> None:
        if notify is not None:
            await notify(update.done, update.message, update.total)

    try:
        report = await run_scenario(
            args.scenario if args.scenario is not None else args.scenario_path or "",
            caller=RouterCaller(principal=principal),
            models=args.models,
            repeat=args.repeat,
            max_steps=args.max_steps,
            max_cost_usd=args.max_cost_usd,
            timeout_s=args.timeout_s,
            on_progress=progress,
            remote=not files,
        )
    except InvalidInput as error:
        raise InvalidRequestError(f"invalid scenario: {error}") from error
    return report.to_json(args.detail)
