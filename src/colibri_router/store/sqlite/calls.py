"""Ledger reads for the team server's pages (see :mod:`colibri_router.store.calls`), in SQLite."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from colibri_router.store.calls import OUTCOME_ERROR, OUTCOME_OK, CallQuery, DaySpend, SpendBy, StoredCall
from colibri_router.store.records import LEDGER_COLUMNS, LedgerRow
from colibri_router.store.sqlite.filters import where
from colibri_router.store.sqlite.timestamps import from_ms, to_ms

_SELECT = f"SELECT id, at_ms, {', '.join(LEDGER_COLUMNS)} FROM ledger"
_DAY = "strftime('%Y-%m-%d', at_ms / 1000, 'unixepoch')"


def _call(values: tuple[Any, ...]) -> StoredCall:
    call_id, at_ms, *rest = values
    return StoredCall(call_id, LedgerRow.from_columns(from_ms(at_ms), dict(zip(LEDGER_COLUMNS, rest, strict=True))))


def one(connection: sqlite3.Connection, call_id: int, principal: str | None) -> StoredCall | None:
    clause, parameters = where(("id = ?", call_id), ("principal = ?", principal))
    found = connection.execute(_SELECT + clause, parameters).fetchone()
    return None if found is None else _call(found)


def recent(connection: sqlite3.Connection, query: CallQuery) -> list[StoredCall]:
    clause, parameters = where(
        ("principal = ?", query.principal),
        ("model = ?", query.model),
        ("outcome = ?", OUTCOME_OK if query.outcome == OUTCOME_OK else None),
        ("outcome != ?", OUTCOME_OK if query.outcome == OUTCOME_ERROR else None),
        ("kind = ?", query.kind),
        ("at_ms >= ?", None if query.since is None else to_ms(query.since)),
        ("at_ms < ?", None if query.until is None else to_ms(query.until)),
        ("id < ?", query.before_id),
    )
    rows = connection.execute(f"{_SELECT}{clause} ORDER BY id DESC LIMIT ?", (*parameters, query.limit)).fetchall()
    return [_call(row) for row in rows]


def spend_by_day(connection: sqlite3.Connection, principal: str | None, since: datetime, by: SpendBy) -> list[DaySpend]:
    clause, parameters = where(("principal = ?", principal), ("at_ms >= ?", to_ms(since)))
    rows = connection.execute(
        f"SELECT {_DAY} AS day, {by} AS key, COUNT(*), SUM(outcome != 'ok'), COALESCE(SUM(cost_micro_usd), 0)"
        f" FROM ledger{clause} GROUP BY day, key ORDER BY day, key",
        parameters,
    ).fetchall()
    return [DaySpend(*row) for row in rows]
