"""The router_call service: the router, with threads, the usage ledger and budgets around it.

A stateless call is the router's answer plus one ledger row. With ``thread_id`` the stored history
comes first: the thread is claimed (a second call on it waits, in any process), the host's new turns
are appended to its history, the router answers, and the new turns and the assistant turn are stored.
Budgets reserve each call's worst case before anything is sent and settle it with the real cost. The
ledger row is written in a shielded cleanup, so a cancelled call still has one. A database the call
needs before anything is sent (its thread, a budget reservation) that cannot be reached fails the call
with a ``STORE_UNAVAILABLE``-kind error; one needed only afterwards (the ledger row, storing the answer)
never breaks a call: the result says so in a warning and the log names the path. The accounting
itself (limits, reservation, rows, store failures) is :mod:`colibri_router.accounting`'s, shared
with every service that asks the router.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio
import httpx

from colibri_router import observability
from colibri_router.accounting import Ledger, worst_case
from colibri_router.callers import ToolCall, local_principal
from colibri_router.confirmation import Confirmation
from colibri_router.conversation import CompletionRequest
from colibri_router.errors import ColibriError, CostCapError
from colibri_router.progress import Notify
from colibri_router.providers import Choice
from colibri_router.retry import Deadline
from colibri_router.router import route
from colibri_router.router.attachments import with_files
from colibri_router.schema import InputMessage, RouterCallInput, RouterCallResult
from colibri_router.session import Ask
from colibri_router.settings import load_settings
from colibri_router.store import StoreError

NEW_THREAD = "new"
# How long a call on a thread waits for another call on the same thread to finish.
THREAD_WAIT_S = 30.0


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
    principal = principal or local_principal()
    watch = observability.routed_call(principal, args)
    try:
        result = await _serve(args, principal, client, notify, confirm)
    except ColibriError as error:
        watch.finished(None, error)
        raise
    except Exception:
        watch.finished(None, ColibriError("unexpected failure"))  # kind UNKNOWN; the shell logs it
        raise
    except BaseException:
        watch.finished(None, None)  # cancelled
        raise
    watch.finished(result, None)
    return result


async def _serve(
    args: RouterCallInput,
    principal: str,
    client: httpx.AsyncClient | None,
    notify: Notify | None,
    confirm: Ask | None,
) -> RouterCallResult:
    settings = load_settings()
    ledger = Ledger.open(settings, principal, thread=args.thread_id is not None, announce=True)
    deadline = Deadline.after(args.timeout_s or settings.timeout_s)
    call = _Call(args, ledger, Confirmation(confirm, settings.confirm_over_usd, deadline))
    try:
        # The files are read before the thread is: the thread stores the turn as it was sent.
        call.args = await with_files(args, settings)
        result = await _with_thread(call, client, notify)
    except BaseException as error:
        with anyio.CancelScope(shield=True):
            await call.close(None, error if isinstance(error, ColibriError) else None)
        raise
    with anyio.CancelScope(shield=True):
        await call.close(result, None)
    return result.model_copy(update={"warnings": [*result.warnings, *ledger.warnings]})


async def _with_thread(call: _Call, client: httpx.AsyncClient | None, notify: Notify | None) -> RouterCallResult:
    args, ledger = call.args, call.ledger
    store, principal = ledger.store, ledger.principal
    if args.thread_id is None or store is None:
        return await route(args, client=client, notify=notify, admit=call.admit, settings=ledger.settings)
    new_turns = args.new_turns()
    async with AsyncExitStack() as stack:
        lease, history = None, []
        if args.thread_id != NEW_THREAD:
            lease = await stack.enter_async_context(store.claim_thread(args.thread_id, principal, THREAD_WAIT_S))
            history = (await store.load_thread(args.thread_id, principal)).messages
        conversation = [InputMessage.model_validate(turn) for turn in [*history, *new_turns]]
        routed = args.model_copy(update={"messages": conversation, "prompt": None, "thread_id": None})
        call.thread_id = None if lease is None else args.thread_id
        result = await route(routed, client=client, notify=notify, admit=call.admit, settings=ledger.settings)
        assistant = (
            result.message.model_dump()
            if result.message
            else result.thread_turn() or {"role": "assistant", "content": result.content}
        )
        try:
            if lease is None:
                call.thread_id = await store.create_thread(principal, result.provider, result.model)
            await store.append_turns(
                call.thread_id or "",
                principal,
                [*new_turns, assistant],
                result.provider,
                result.model,
                lease=lease,
            )
        except StoreError as error:
            ledger.store_failed("the thread", error)
        # The thread holds the turn: the host sends only what is new next time.
        return result.model_copy(update={"thread_id": call.thread_id, "message": None})


@dataclass
class _Call:
    """One router_call's input, as read so far, and its ledger."""

    args: RouterCallInput
    ledger: Ledger
    confirmation: Confirmation
    thread_id: str | None = None
    started: datetime = field(default_factory=lambda: datetime.now(UTC))

    async def admit(self, choice: Choice, request: CompletionRequest) -> list[str]:
        """Before an attempt is sent: the call's own cost cap, the user's confirmation (once), then (once)
        the budgets' reservation."""
        if self.args.max_cost_usd is None and not self.ledger.limits.by_scope() and not self.confirmation.active:
            return []  # nothing to check: no price lookup on the plain path
        warnings: list[str] = []
        worst = worst_case(choice, request)
        if worst is None and not choice.provider.subscription:
            # A subscription (an agent's own login, the host's model) has no price to know.
            warnings.append(f"no price known for {choice.model}: the cost cap and budgets could not check this call")
        if worst is not None and self.args.max_cost_usd is not None and worst > self.args.max_cost_usd:
            raise CostCapError(
                f"the call could cost up to ${worst:.6f} with {choice.model} (its input and max_tokens "
                f"{request.max_tokens}), above max_cost_usd ${self.args.max_cost_usd:g}; nothing was sent"
            )
        await self.confirmation.check([(choice.model, worst)])
        await self.ledger.reserve(worst)
        return warnings

    async def close(self, result: RouterCallResult | None, error: ColibriError | None) -> None:
        """Write the ledger row (settling the reservation, if any). Never raises a store failure."""
        if self.ledger.store is None:
            return  # no ledger, no row (and no row was announced)
        row = self.ledger.row(self.args, result, error, started=self.started, thread_id=self.thread_id)
        await self.ledger.write([row], "the ledger row")
