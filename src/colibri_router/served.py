"""One router_call served: the router, with its thread, its ledger row and budgets, and its metrics.

What router_call's tool (:mod:`colibri_router.call`) and the agent tests' model caller
(:mod:`colibri_router.testing.router_caller`) share, so that each scenario step is the router_call it
stands for and no service imports another.

The tool input is converted once, where the call enters, into the router's
:class:`~colibri_router.router.call.Call` (the files read then). A stateless call is the router's
answer plus one ledger row. With ``thread_id`` the stored history comes first: the thread is claimed
(a second call on it waits, in any process), the call continues its history, the router answers, and
the new turns and the assistant turn are stored, in the Anthropic shape a host sends (the only place,
with the result's ``message``, where router_call's state takes that shape again). Budgets reserve each
call's worst case before anything is sent and settle it with the real cost. The ledger row is written
in a shielded cleanup, so a cancelled call still has one. A database the call needs before anything is
sent (its thread, a budget reservation) that cannot be reached fails the call with a
``STORE_UNAVAILABLE``-kind error; one needed only afterwards (the ledger row, storing the answer) never
breaks a call: the result says so in a warning and the log names the path. The accounting itself
(limits, reservation, rows, store failures) is :mod:`colibri_router.accounting`'s.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx

from colibri_router import observability
from colibri_router.accounting import Ledger, worst_case
from colibri_router.callers import local_principal
from colibri_router.confirmation import Confirmation
from colibri_router.context import Reading
from colibri_router.conversation import CompletionRequest, anthropic_blocks
from colibri_router.errors import ColibriError, CostCapError
from colibri_router.progress import Notify
from colibri_router.providers import Choice
from colibri_router.retry import Deadline
from colibri_router.router import route
from colibri_router.router.call import Call, Outcome, call_of
from colibri_router.schema import InputMessage, RouterCallInput, RouterCallResult
from colibri_router.session import Ask
from colibri_router.settings import load_settings
from colibri_router.store import StoreError

__all__ = ["NEW_THREAD", "THREAD_WAIT_S", "served"]

NEW_THREAD = "new"
# How long a call on a thread waits for another call on the same thread to finish.
THREAD_WAIT_S = 30.0


async def served(
    args: RouterCallInput,
    *,
    principal: str | None = None,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
    confirm: Ask | None = None,
) -> Outcome:
    """``confirm``: how to ask the user before an expensive call (None: the threshold is a cap)."""
    principal = principal or local_principal()
    watch = observability.routed_call(principal, args)
    try:
        outcome = await _serve(args, principal, client, notify, confirm)
    except ColibriError as error:
        watch.finished(None, error)
        raise
    except Exception:
        watch.finished(None, ColibriError("unexpected failure"))  # kind UNKNOWN; the shell logs it
        raise
    except BaseException:
        watch.finished(None, None)  # cancelled
        raise
    watch.finished(outcome.result, None)
    return outcome


async def _serve(
    args: RouterCallInput,
    principal: str,
    client: httpx.AsyncClient | None,
    notify: Notify | None,
    confirm: Ask | None,
) -> Outcome:
    settings = load_settings()
    ledger = Ledger.open(settings, principal, thread=args.thread_id is not None, announce=True)
    deadline = Deadline.after(args.timeout_s or settings.timeout_s)
    accounted = _Accounted(args, ledger, Confirmation(confirm, settings.confirm_over_usd, deadline))
    try:
        # The files are read before the thread is: the thread stores the turn as it was sent.
        call = await call_of(args, settings)
        outcome = await _with_thread(accounted, call, client, notify)
    except BaseException as error:
        with anyio.CancelScope(shield=True):
            await accounted.close(None, error if isinstance(error, ColibriError) else None)
        raise
    with anyio.CancelScope(shield=True):
        await accounted.close(outcome.result, None)
    result = outcome.result
    return replace(outcome, result=result.model_copy(update={"warnings": [*result.warnings, *ledger.warnings]}))


async def _with_thread(
    accounted: _Accounted, call: Call, client: httpx.AsyncClient | None, notify: Notify | None
) -> Outcome:
    args, ledger = accounted.args, accounted.ledger
    store, principal = ledger.store, ledger.principal
    if args.thread_id is None or store is None:
        return await route(call, client=client, notify=notify, admit=accounted.admit, settings=ledger.settings)
    new_turns = _turns_to_store(args, call.reading)
    async with AsyncExitStack() as stack:
        lease, history = None, []
        if args.thread_id != NEW_THREAD:
            lease = await stack.enter_async_context(store.claim_thread(args.thread_id, principal, THREAD_WAIT_S))
            history = (await store.load_thread(args.thread_id, principal)).messages
        continued = call.after(tuple(InputMessage.model_validate(turn).to_message() for turn in history))
        accounted.thread_id = None if lease is None else args.thread_id
        outcome = await route(continued, client=client, notify=notify, admit=accounted.admit, settings=ledger.settings)
        result = outcome.result
        try:
            if lease is None:
                accounted.thread_id = await store.create_thread(principal, result.provider, result.model)
            await store.append_turns(
                accounted.thread_id or "",
                principal,
                [*new_turns, _assistant_turn(outcome)],
                result.provider,
                result.model,
                lease=lease,
            )
        except StoreError as error:
            ledger.store_failed("the thread", error)
        # The thread holds the turn: the host sends only what is new next time.
        return replace(outcome, result=result.model_copy(update={"thread_id": accounted.thread_id, "message": None}))


def _turns_to_store(args: RouterCallInput, reading: Reading | None) -> list[dict[str, Any]]:
    """The call's own turns as a thread stores them: as the host sent them, the files' blocks after
    the last user turn's, so a continuation sees the same context."""
    turns = args.new_turns()
    if reading is None:
        return turns
    last = max(i for i, turn in enumerate(turns) if turn["role"] == "user")  # call_of refused none
    content = turns[last]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    with_files = InputMessage.model_validate({"role": "user", "content": [*blocks, *reading.blocks()]})
    turns[last] = with_files.model_dump(mode="json", exclude_none=True)
    return turns


def _assistant_turn(outcome: Outcome) -> dict[str, Any]:
    """The answer as the thread stores it: the result's ``message`` (tool calls), the turn's blocks
    when they carry opaque state (an agent's session, resumed on the thread's next call), else its text."""
    result = outcome.result
    if result.message is not None:
        return result.message.model_dump()
    if outcome.keeps_state:
        return {"role": "assistant", "content": anthropic_blocks(outcome.parts)}
    return {"role": "assistant", "content": result.content}


@dataclass
class _Accounted:
    """One router_call's input, its ledger and the thread it ended on."""

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
