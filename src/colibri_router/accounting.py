"""The accounting around ``route()``, one module for every service that asks the router.

A service opens a :class:`Ledger` for its call: the budget limits come from the settings, and a
store that is off refuses the call when it needs the store (a thread, a budget). Before anything is
sent the service prices the requests the router planned (:func:`worst_case`, from the one estimate
in :mod:`colibri_router.token_estimate`) and :meth:`Ledger.reserve` holds that worst case in the
budgets; after, :meth:`Ledger.write` records one ledger row per model asked and settles the
reservation with the last. A database needed before anything is sent that cannot be reached raises
(kind ``STORE_UNAVAILABLE``); one needed only afterwards never breaks a call: the failure becomes a
warning for the result and the log names the path (:meth:`Ledger.store_failed`).

What to refuse and how to word it (one call's cost cap, the sum of many) stays with each service.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from colibri_router.errors import ColibriError, ConfigError, InvalidOutputError
from colibri_router.gateway.budgets import member_budgets
from colibri_router.jobs.spending import spent
from colibri_router.logs import get_logger
from colibri_router.providers.cost import worst_case
from colibri_router.schema import RouterCallInput, RouterCallResult
from colibri_router.settings import Settings
from colibri_router.store import (
    BudgetLimits,
    ExpectedWrite,
    LedgerAttempt,
    LedgerRow,
    Reservation,
    Store,
    StoreError,
    shared_store,
    usd_to_micro,
)

__all__ = ["Ledger", "worst_case"]

STORE_OFF_THREAD = "thread_id needs the store, and COLIBRI_STORE is off"
STORE_OFF_BUDGET = "COLIBRI_BUDGET_* need the store (the ledger), and COLIBRI_STORE is off"


@dataclass
class Ledger:
    """One service call's budget reservation, its ledger rows and the warnings its store gave."""

    settings: Settings
    store: Store | None
    principal: str
    limits: BudgetLimits
    reservation: Reservation | None = None
    # The row a call will write: the store's writer waits a moment for it (grouped commits).
    expected_row: ExpectedWrite | None = None
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, settings: Settings, principal: str, *, thread: bool = False, announce: bool = False) -> Ledger:
        """The ledger for one call: the shared store and the budget limits of ``settings``. With the store
        off, a call on a ``thread`` or under a budget is refused (a ``CONFIG_ERROR``) before anything is
        read or sent. ``announce``: tell the store's writer a row is coming."""
        store = shared_store(settings)
        limits = BudgetLimits.from_usd(
            daily=settings.budget_daily_usd,
            monthly=settings.budget_monthly_usd,
            daily_per_principal=settings.budget_daily_usd_per_user,
        )
        limits = member_budgets(limits)  # a team member's daily_usd and monthly_usd
        if store is None:
            if thread:
                raise ConfigError(STORE_OFF_THREAD)
            if limits.by_scope():
                raise ConfigError(STORE_OFF_BUDGET)
        expected = ExpectedWrite() if announce and store is not None else None
        return cls(settings, store, principal, limits, expected_row=expected)

    @property
    def budgeted(self) -> bool:
        return bool(self.limits.by_scope())

    async def reserve(self, worst_usd: float | None) -> None:
        """Hold the worst case in the budgets, once per call (an unpriced call holds nothing but is
        still checked against what is spent). A StoreError goes up (kind STORE_UNAVAILABLE): without
        the database no budget can be checked, and a call admitted unchecked could spend past it."""
        if self.store is None or not self.budgeted or self.reservation is not None:
            return
        estimate = usd_to_micro(worst_usd) if worst_usd is not None else 0
        self.reservation = await self.store.reserve_budget(self.principal, estimate, self.limits)

    def row(
        self,
        asked: RouterCallInput,
        result: RouterCallResult | None,
        error: ColibriError | None,
        *,
        started: datetime,
        thread_id: str | None = None,
    ) -> LedgerRow:
        """The ledger row of one router call that began at ``started``: its usage and cost when it
        answered, its error's code and kind when it failed, ``CANCELLED`` with neither. Its cost
        counts at once towards the job running the call, if any (:mod:`colibri_router.jobs.spending`)."""
        row = self._row(asked, result, error, started=started, thread_id=thread_id)
        spent([row.cost_micro_usd])
        return row

    def _row(
        self,
        asked: RouterCallInput,
        result: RouterCallResult | None,
        error: ColibriError | None,
        *,
        started: datetime,
        thread_id: str | None,
    ) -> LedgerRow:
        if result is not None:
            return LedgerRow(
                at=started,
                principal=self.principal,
                thread_id=thread_id,
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
                attempts=tuple(_attempt(attempt.model_dump()) for attempt in result.attempts),
                warning_count=len(result.warnings),
                key_fingerprint=result.attempts[-1].key if result.attempts else None,
            )
        # An answer that never matched its schema was still paid for, both turns of it.
        spent = error if isinstance(error, InvalidOutputError) else None
        return LedgerRow(
            at=started,
            principal=self.principal,
            thread_id=thread_id,
            provider=(error.provider if error else None) or asked.provider or "",
            model=(error.model if error else None) or asked.model or "",
            input_tokens=spent.tokens[0] if spent else 0,
            output_tokens=spent.tokens[1] if spent else 0,
            cost_micro_usd=(None if spent.cost_usd is None else usd_to_micro(spent.cost_usd)) if spent else 0,
            latency_ms=round((datetime.now(UTC) - started).total_seconds() * 1000),
            outcome=error.code if error else "CANCELLED",
            kind=error.kind if error else None,
            attempts=tuple(_attempt(attempt) for attempt in error.attempts) if error else (),
            key_fingerprint=error.key_fingerprint if error else None,
        )

    async def write(self, rows: Sequence[LedgerRow], what: str) -> None:
        """Record ``rows``; the last settles the reservation, so the whole amount stays reserved while
        any call is in flight. Never raises a store failure: it becomes a warning about ``what``."""
        if self.expected_row is not None:
            self.expected_row.arrived()
        if self.store is None or not rows:
            return
        try:
            for row in rows[:-1]:
                await self.store.record_call(row)
            if self.reservation is not None:
                await self.store.settle(self.reservation, rows[-1])
            else:
                await self.store.record_call(rows[-1])
        except StoreError as failure:
            self.store_failed(what, failure)

    def store_failed(self, what: str, error: StoreError) -> None:
        """A write after the answer failed: the result says so, the log names the path."""
        self.warnings.append(f"{what} could not be written to {error.store_name}; see the server log")
        get_logger(__name__).error("store failure", what=what, path=error.path, error=str(error.cause))


def _attempt(fields: Mapping[str, Any]) -> LedgerAttempt:
    """An attempt of a result or an error (the router's ``Attempt`` fields) as the ledger keeps it."""
    return LedgerAttempt(
        provider=str(fields["provider"]),
        model=str(fields["model"]),
        outcome=str(fields["outcome"]),
        kind=None if fields.get("kind") is None else str(fields["kind"]),
        latency_ms=int(fields["latency_ms"]),
    )
