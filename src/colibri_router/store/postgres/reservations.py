"""Budget reservations, race-free across every process sharing the database.

Each admission takes one advisory lock (``locks.BUDGET_ADMISSION``) for its transaction, then
measures the committed spend, applies the admission rule and inserts its reservation: admissions
from any number of processes thus happen one after another, as the rule requires. The lock is taken
by the transaction's first statement and the spend is measured by a later one: at the default READ
COMMITTED isolation each statement sees everything committed before it began, so every admission
sees the reservation of the one before it.

Settling takes no lock: it moves a call's cost from its reservation to the ledger in one transaction
(with the rows of concurrent calls: ``ledger.write_group``),
and the spend is measured in one statement (one snapshot), so an admission sees the cost in exactly
one of the two places, whenever the settle commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from colibri_router.store import budget
from colibri_router.store.budget import BudgetLimits, Reservation
from colibri_router.store.errors import BudgetScope
from colibri_router.store.postgres import locks
from colibri_router.store.postgres.connection import Connection
from colibri_router.store.utc_windows import day_start, month_start

# The committed spend of each scope (see colibri_router.store.budget), measured against the row
# `bounds` (month_start, day_start, principal); only the configured scopes are asked for.
_COMMITTED_SPEND: dict[BudgetScope, str] = {
    "monthly": "(SELECT COALESCE(SUM(cost_micro_usd), 0) FROM ledger WHERE at >= bounds.month_start)"
    " + (SELECT COALESCE(SUM(estimate_micro_usd), 0) FROM budget_reservations)",
    "daily": "(SELECT COALESCE(SUM(cost_micro_usd), 0) FROM ledger WHERE at >= bounds.day_start)"
    " + (SELECT COALESCE(SUM(estimate_micro_usd), 0) FROM budget_reservations)",
    "daily_per_principal": "(SELECT COALESCE(SUM(cost_micro_usd), 0) FROM ledger"
    " WHERE principal = bounds.principal AND at >= bounds.day_start)"
    " + (SELECT COALESCE(SUM(estimate_micro_usd), 0) FROM budget_reservations WHERE principal = bounds.principal)",
    "monthly_per_principal": "(SELECT COALESCE(SUM(cost_micro_usd), 0) FROM ledger"
    " WHERE principal = bounds.principal AND at >= bounds.month_start)"
    " + (SELECT COALESCE(SUM(estimate_micro_usd), 0) FROM budget_reservations WHERE principal = bounds.principal)",
}


async def reserve(connection: Connection, reservation: Reservation, limits: BudgetLimits, now: datetime) -> None:
    """Admit the call ``reservation`` describes (or raise ``BudgetExceeded``) and record it."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", locks.BUDGET_ADMISSION)
        await connection.execute("DELETE FROM budget_reservations WHERE expires_at <= $1", now)
        scopes = [scope for scope, _ in limits.by_scope()]
        spend = await _committed_spend(connection, scopes, reservation.principal, now)
        budget.check_admission(limits, spend.__getitem__, now)
        await connection.execute(
            "INSERT INTO budget_reservations (reservation_id, principal, estimate_micro_usd, created_at, expires_at)"
            " VALUES ($1, $2, $3, $4, $5)",
            reservation.reservation_id,
            reservation.principal,
            reservation.estimate_micro_usd,
            now,
            reservation.expires_at,
        )


async def _committed_spend(
    connection: Connection, scopes: Sequence[BudgetScope], principal: str, now: datetime
) -> dict[BudgetScope, int]:
    """Each scope's committed spend, all in one statement. Sums of bigints are numerics: cast back."""
    if not scopes:
        return {}
    measures = ", ".join(f"({_COMMITTED_SPEND[scope]})::bigint" for scope in scopes)
    [row] = await connection.fetch(
        "WITH bounds AS (SELECT $1::timestamptz AS month_start, $2::timestamptz AS day_start, $3::text AS principal)"
        f" SELECT {measures} FROM bounds",
        month_start(now),
        day_start(now),
        principal,
    )
    return dict(zip(scopes, row, strict=True))
