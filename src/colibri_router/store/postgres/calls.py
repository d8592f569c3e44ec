"""Ledger reads for the team server's pages (see :mod:`colibri_router.store.calls`), in PostgreSQL."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from colibri_router.store.calls import OUTCOME_ERROR, OUTCOME_OK, CallQuery, DaySpend, SpendBy, StoredCall
from colibri_router.store.postgres.connection import Connection
from colibri_router.store.postgres.filters import where
from colibri_router.store.records import LEDGER_COLUMNS, LedgerRow

_SELECT = f"SELECT id, at, {', '.join(LEDGER_COLUMNS)} FROM ledger"
_DAY = "to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"


def _call(record: asyncpg.Record) -> StoredCall:
    values = {column: record[column] for column in LEDGER_COLUMNS}
    return StoredCall(int(record["id"]), LedgerRow.from_columns(record["at"], values))


async def one(connection: Connection, call_id: int, principal: str | None) -> StoredCall | None:
    clause, parameters = where(("id = {}", call_id), ("principal = {}", principal))
    found = await connection.fetchrow(_SELECT + clause, *parameters)
    return None if found is None else _call(found)


async def recent(connection: Connection, query: CallQuery) -> list[StoredCall]:
    clause, parameters = where(
        ("principal = {}", query.principal),
        ("model = {}", query.model),
        ("outcome = {}", OUTCOME_OK if query.outcome == OUTCOME_OK else None),
        ("outcome <> {}", OUTCOME_OK if query.outcome == OUTCOME_ERROR else None),
        ("kind = {}", query.kind),
        ("at >= {}", query.since),
        ("at < {}", query.until),
        ("id < {}", query.before_id),
    )
    limit = f"${len(parameters) + 1}"
    rows = await connection.fetch(f"{_SELECT}{clause} ORDER BY id DESC LIMIT {limit}", *parameters, query.limit)
    return [_call(row) for row in rows]


async def spend_by_day(connection: Connection, principal: str | None, since: datetime, by: SpendBy) -> list[DaySpend]:
    """SUM of a bigint is a numeric in PostgreSQL: cast back, the sums stay far below 2**63."""
    clause, parameters = where(("principal = {}", principal), ("at >= {}", since))
    rows = await connection.fetch(
        f"SELECT {_DAY} AS day, {by} AS key, COUNT(*), COUNT(*) FILTER (WHERE outcome <> 'ok'),"
        f" COALESCE(SUM(cost_micro_usd), 0)::bigint FROM ledger{clause} GROUP BY 1, 2 ORDER BY 1, 2",
        *parameters,
    )
    return [DaySpend(*row) for row in rows]
