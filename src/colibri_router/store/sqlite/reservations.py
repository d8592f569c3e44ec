"""Budget reservations: the admission check and the reservation it grants share one ``BEGIN
IMMEDIATE`` transaction, so no other admission (in this process or another) can run between the
two; settling writes the ledger row and drops the reservation in one transaction as well (with the
rows of concurrent calls: ``ledger.write_group``)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from colibri_router.store import budget
from colibri_router.store.budget import BudgetLimits, Reservation
from colibri_router.store.errors import BudgetScope
from colibri_router.store.sqlite import ledger
from colibri_router.store.sqlite.filters import where
from colibri_router.store.sqlite.timestamps import to_ms
from colibri_router.store.sqlite.transactions import write_transaction
from colibri_router.store.utc_windows import day_start, month_start


def reserve(connection: sqlite3.Connection, reservation: Reservation, limits: BudgetLimits, now: datetime) -> None:
    """Admit the call ``reservation`` describes (or raise ``BudgetExceeded``) and record it."""
    now_ms = to_ms(now)

    def committed_spend(scope: BudgetScope) -> int:
        principal = reservation.principal if scope.endswith("_per_principal") else None
        window_start = month_start(now) if scope.startswith("monthly") else day_start(now)
        return ledger.cost_since(connection, to_ms(window_start), principal) + _reserved(connection, principal)

    with write_transaction(connection):
        connection.execute("DELETE FROM budget_reservations WHERE expires_at_ms <= ?", (now_ms,))
        budget.check_admission(limits, committed_spend, now)
        connection.execute(
            "INSERT INTO budget_reservations (reservation_id, principal, estimate_micro_usd, created_at_ms,"
            " expires_at_ms) VALUES (?, ?, ?, ?, ?)",
            (
                reservation.reservation_id,
                reservation.principal,
                reservation.estimate_micro_usd,
                now_ms,
                to_ms(reservation.expires_at),
            ),
        )


def _reserved(connection: sqlite3.Connection, principal: str | None) -> int:
    """Estimates held by live reservations (expired ones were deleted earlier in the transaction)."""
    clause, parameters = where(("principal = ?", principal))
    held: int = connection.execute(
        f"SELECT COALESCE(SUM(estimate_micro_usd), 0) FROM budget_reservations{clause}", parameters
    ).fetchone()[0]
    return held
