"""The router_call service: the router, with threads, the usage ledger and budgets around it.

A stateless call is the router's answer plus one ledger row. With ``thread_id`` the stored history
comes first: the thread is claimed (a second call on it waits, in any process), the host's new turns
are appended to its history, the router answers, and the new turns and the assistant turn are stored.
Budgets reserve each call's worst case before anything is sent and settle it with the real cost. The
ledger row is written in a shielded cleanup, so a cancelled call still has one. A database the call
needs before anything is sent (its thread, a budget reservation) that cannot be reached fails the call
with a ``STORE_UNAVAILABLE``-kind error; one needed only afterwards (the ledger row, storing the answer)
never breaks a call: the result says so in a warning and the log names the path.
"""

from __future__ import annotations

import math
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio
import httpx

from colibri_router import observability
from colibri_router.attachments import with_files
from colibri_router.callers import local_principal
from colibri_router.context.reading import media_tokens
from colibri_router.conversation import CompletionRequest, Media, ToolResult
from colibri_router.errors import ColibriError, ConfigError, CostCapError
from colibri_router.logs import get_logger
from colibri_router.pricing import worst_case_cost
from colibri_router.progress import Notify
from colibri_router.providers import Choice
from colibri_router.router import route
from colibri_router.schema import InputMessage, RouterCallInput, RouterCallResult
from colibri_router.settings import Settings, load_settings
from colibri_router.store import (
    BudgetLimits,
    ExpectedWrite,
    LedgerRow,
    Reservation,
    Store,
    StoreError,
    shared_store,
    usd_to_micro,
)

NEW_THREAD = "new"
# How long a call on a thread waits for another call on the same thread to finish.
THREAD_WAIT_S = 30.0
CHARS_PER_TOKEN_ESTIMATE = 3  # conservative: real text averages ~4 characters a token


async def serve(
    args: RouterCallInput,
    *,
    principal: str | None = None,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
) -> RouterCallResult:
    principal = principal or local_principal()
    watch = observability.routed_call(principal, args)
    try:
        result = await _serve(args, principal, client, notify)
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
) -> RouterCallResult:
    settings = load_settings()
    store = shared_store(settings)
    limits = BudgetLimits.from_usd(
        daily=settings.budget_daily_usd,
        monthly=settings.budget_monthly_usd,
        daily_per_principal=settings.budget_daily_usd_per_user,
    )
    if store is None:
        if args.thread_id is not None:
            raise ConfigError("thread_id needs the store, and COLIBRI_STORE is off")
        if limits.by_scope():
            raise ConfigError("COLIBRI_BUDGET_* need the store (the ledger), and COLIBRI_STORE is off")
    call = Accounting(args, settings, store, principal, limits)
    if store is not None:
        # The row this call will write: the store's writer waits a moment for it (grouped commits).
        call.expected_row = ExpectedWrite()
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
    return result.model_copy(update={"warnings": [*result.warnings, *call.warnings]})


async def _with_thread(call: Accounting, client: httpx.AsyncClient | None, notify: Notify | None) -> RouterCallResult:
    args, store = call.args, call.store
    if args.thread_id is None or store is None:
        return await route(args, client=client, notify=notify, admit=call.admit, settings=call.settings)
    new_turns = args.new_turns()
    async with AsyncExitStack() as stack:
        lease, history = None, []
        if args.thread_id != NEW_THREAD:
            lease = await stack.enter_async_context(store.claim_thread(args.thread_id, call.principal, THREAD_WAIT_S))
            history = (await store.load_thread(args.thread_id, call.principal)).messages
        conversation = [InputMessage.model_validate(turn) for turn in [*history, *new_turns]]
        routed = args.model_copy(update={"messages": conversation, "prompt": None, "thread_id": None})
        call.thread_id = None if lease is None else args.thread_id
        result = await route(routed, client=client, notify=notify, admit=call.admit, settings=call.settings)
        assistant = (
            result.message.model_dump()
            if result.message
            else result.thread_turn() or {"role": "assistant", "content": result.content}
        )
        try:
            if lease is None:
                call.thread_id = await store.create_thread(call.principal, result.provider, result.model)
            await store.append_turns(
                call.thread_id or "",
                call.principal,
                [*new_turns, assistant],
                result.provider,
                result.model,
                lease=lease,
            )
        except StoreError as error:
            call.store_failed("the thread", error)
        # The thread holds the turn: the host sends only what is new next time.
        return result.model_copy(update={"thread_id": call.thread_id, "message": None})


@dataclass
class Accounting:
    """One call's budget reservation and ledger row."""

    args: RouterCallInput
    settings: Settings
    store: Store | None
    principal: str
    limits: BudgetLimits
    thread_id: str | None = None
    reservation: Reservation | None = None
    expected_row: ExpectedWrite | None = None
    warnings: list[str] = field(default_factory=list)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))

    async def admit(self, choice: Choice, request: CompletionRequest) -> list[str]:
        """Before an attempt is sent: the call's own cost cap, then (once) the budgets' reservation."""
        if self.args.max_cost_usd is None and not self.limits.by_scope():
            return []  # nothing to check: no price lookup on the plain path
        warnings: list[str] = []
        worst = worst_case_cost(
            choice.provider.price_provider,
            choice.model,
            estimated_input_tokens(request),
            request.max_tokens,
            local=choice.provider.local,
        )
        if worst is None and not choice.provider.subscription:
            # A subscription (an agent's own login, the host's model) has no price to know.
            warnings.append(f"no price known for {choice.model}: the cost cap and budgets could not check this call")
        if worst is not None and self.args.max_cost_usd is not None and worst > self.args.max_cost_usd:
            raise CostCapError(
                f"the call could cost up to ${worst:.6f} with {choice.model} (its input and max_tokens "
                f"{request.max_tokens}), above max_cost_usd ${self.args.max_cost_usd:g}; nothing was sent"
            )
        if self.store is not None and self.limits.by_scope() and self.reservation is None:
            estimate = usd_to_micro(worst) if worst is not None else 0
            # A StoreError goes up (kind STORE_UNAVAILABLE): without the database no budget can be
            # checked, and a call admitted unchecked could spend past it.
            self.reservation = await self.store.reserve_budget(self.principal, estimate, self.limits)
        return warnings

    async def close(self, result: RouterCallResult | None, error: ColibriError | None) -> None:
        """Write the ledger row (settling the reservation, if any). Never raises a store failure."""
        if self.expected_row is not None:
            self.expected_row.arrived()
        if self.store is None:
            return
        row = self.row(result, error)
        try:
            if self.reservation is not None:
                await self.store.settle(self.reservation, row)
            else:
                await self.store.record_call(row)
        except StoreError as failure:
            self.store_failed("the ledger row", failure)

    def store_failed(self, what: str, error: StoreError) -> None:
        self.warnings.append(f"{what} could not be written to {error.store_name}; see the server log")
        get_logger(__name__).error("store failure", what=what, path=error.path, error=str(error.cause))

    def row(self, result: RouterCallResult | None, error: ColibriError | None) -> LedgerRow:
        elapsed = round((datetime.now(UTC) - self.started).total_seconds() * 1000)
        if result is not None:
            return LedgerRow(
                at=self.started,
                principal=self.principal,
                thread_id=self.thread_id,
                provider=result.provider,
                model=result.model,
                input_tokens=result.prompt_tokens,
                output_tokens=result.completion_tokens,
                cached_tokens=result.cached_tokens,
                cache_write_tokens=result.cache_write_tokens,
                reasoning_tokens=result.reasoning_tokens,
                cost_micro_usd=None if result.cost_usd is None else usd_to_micro(result.cost_usd),
                latency_ms=result.latency_ms,
                outcome="ok",
            )
        return LedgerRow(
            at=self.started,
            principal=self.principal,
            thread_id=self.thread_id,
            provider=(error.provider if error else None) or self.args.provider or "",
            model=(error.model if error else None) or self.args.model or "",
            cost_micro_usd=0,
            latency_ms=elapsed,
            outcome=error.code if error else "CANCELLED",
            kind=error.kind if error else None,
        )


def estimated_input_tokens(request: CompletionRequest) -> int:
    """An upper-leaning estimate of the request's input tokens from its characters; an image or a
    PDF counts as what a provider charges for it, not as its base64."""
    chars = len(request.system or "")
    media = 0
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, Media):
                media += media_tokens(part)
            elif isinstance(part, ToolResult) and part.media:
                media += sum(media_tokens(item) for item in part.media)
                chars += len(part.content) + len(part.call_id)
            else:
                chars += len(str(part))
    chars += sum(len(str(tool.input_schema)) + len(tool.name) + len(tool.description or "") for tool in request.tools)
    return math.ceil(chars / CHARS_PER_TOKEN_ESTIMATE) + media
