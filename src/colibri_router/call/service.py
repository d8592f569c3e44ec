"""The router_call service: one router_call, served with its thread, ledger row and budgets.

How a call is served (the tool input converted once into the router's call object, the thread, the
accounting) is :mod:`colibri_router.served`'s, which the agent tests' model caller shares: this
module is the tool's entry and the in-process function that returns the result a host reads.
"""

from __future__ import annotations

import httpx

from colibri_router.callers import ToolCall
from colibri_router.progress import Notify
from colibri_router.schema import RouterCallInput, RouterCallResult
from colibri_router.served import served
from colibri_router.session import Ask

__all__ = ["for_tool", "serve"]


async def for_tool(args: RouterCallInput, call: ToolCall) -> RouterCallResult:
    """router_call, as the tool table (:mod:`colibri_router.server.table`) calls it."""
    return await serve(
        args,
        principal=call.caller.name,
        notify=lambda progress, message: call.notify(progress, message, None),
        confirm=call.confirm,
    )


async def serve(
    args: RouterCallInput,
    *,
    principal: str | None = None,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
    confirm: Ask | None = None,
) -> RouterCallResult:
    """``confirm``: how to ask the user before an expensive call (None: the threshold is a cap)."""
    return (await served(args, principal=principal, client=client, notify=notify, confirm=confirm)).result
