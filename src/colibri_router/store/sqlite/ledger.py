"""Ledger SQL: one row per call, sums for usage reports, and the spend a budget check needs."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from colibri_router.store.records import LEDGER_COLUMNS, GroupBy, LedgerRow, UsageTotals
from colibri_router.store.sqlite.filters import where
from colibri_router.store.sqlite.timestamps import to_ms
from colibri_router.store.sqlite.transactions import write_transaction

_GROUP_KEYS: dict[GroupBy | None, str] = {
    None: "NULL",
    "provider": "provider",
    "model": "model",
    "day": "strftime('%Y-%m-%d', at_ms / 1000, 'unixepoch')",
}


_INSERT = (
    f"INSERT INTO ledger (at_ms, {', '.join(LEDGER_COLUMNS)}) VALUES ({', '.join('?' * (len(LEDGER_COLUMNS) + 1))})"
)


def insert(connection: sqlite3.Connection, row: LedgerRow) -> None:
    connection.execute(_INSERT, (to_ms(row.at), *row.values()))


def write_group(connection: sqlite3.Connection, group: Sequence[tuple[str | None, LedgerRow]]) -> None:
    """A group of calls' rows in one transaction: each row, and the budget reservation it settles
    (None: it reserved nothing) deleted."""
    with write_transaction(connection):
        connection.executemany(_INSERT, [(to_ms(row.at), *row.values()) for _, row in group])
        settled = [(reservation,) for reservation, _ in group if reservation is not None]
        if settled:
            connection.executemany("DELETE FROM budget_reservations WHERE reservation_id = ?", settled)


def totals(
    connection: sqlite3.Connection, principal: str | None, since_ms: int | None, by: GroupBy | None
) -> list[UsageTotals]:
    """Sums per group (one group with key None when ``by`` is None), unordered; none without rows."""
    clause, parameters = where(("principal = ?", principal), ("at_ms >= ?", since_ms))
    rows = connection.execute(
        f"SELECT {_GROUP_KEYS[by]} AS key, COUNT(*), SUM(outcome != 'ok'), SUM(input_tokens), SUM(output_tokens),"
        f" SUM(cached_tokens), COALESCE(SUM(cost_micro_usd), 0), SUM(cost_micro_usd IS NULL) FROM ledger{clause}"
        " GROUP BY key",
        parameters,
    ).fetchall()
    return [UsageTotals(*row) for row in rows]


def cost_since(connection: sqlite3.Connection, since_ms: int, principal: str | None) -> int:
    """Micro-dollars the ledger records from ``since_ms`` on (one caller's, or everyone's)."""
    clause, parameters = where(("principal = ?", principal), ("at_ms >= ?", since_ms))
    cost: int = connection.execute(
        f"SELECT COALESCE(SUM(cost_micro_usd), 0) FROM ledger{clause}", parameters
    ).fetchone()[0]
    return cost
