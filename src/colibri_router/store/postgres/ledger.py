"""Ledger SQL: one row per call, and the sums usage reports are made of."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from colibri_router.store.postgres.connection import Connection
from colibri_router.store.postgres.filters import where
from colibri_router.store.records import LEDGER_COLUMNS, GroupBy, LedgerRow, UsageTotals

_GROUP_KEYS: dict[GroupBy | None, str] = {
    None: "NULL::text",
    "provider": "provider",
    "model": "model",
    "day": "to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
}


_INSERT = (
    f"INSERT INTO ledger (at, {', '.join(LEDGER_COLUMNS)})"
    f" VALUES ({', '.join(f'${n}' for n in range(1, len(LEDGER_COLUMNS) + 2))})"
)


async def insert(connection: Connection, row: LedgerRow) -> None:
    await connection.execute(_INSERT, row.at, *row.values())


async def write_group(connection: Connection, group: Sequence[tuple[str | None, LedgerRow]]) -> None:
    """A group of calls' rows in one transaction: each row, and the budget reservation it settles
    (None: it reserved nothing) deleted."""
    settled = [reservation for reservation, _ in group if reservation is not None]
    if len(group) == 1 and not settled:
        await insert(connection, group[0][1])  # one statement is its own transaction
        return
    async with connection.transaction():
        await connection.executemany(_INSERT, [(row.at, *row.values()) for _, row in group])
        if settled:
            await connection.execute("DELETE FROM budget_reservations WHERE reservation_id = ANY($1::text[])", settled)


async def totals(
    connection: Connection, principal: str | None, since: datetime | None, by: GroupBy | None
) -> list[UsageTotals]:
    """Sums per group (one group with key None when ``by`` is None), unordered; none without rows.
    SUM of a bigint is a numeric in PostgreSQL: cast back, the sums stay far below 2**63."""
    clause, parameters = where(("principal = {}", principal), ("at >= {}", since))
    rows = await connection.fetch(
        f"SELECT {_GROUP_KEYS[by]}, COUNT(*), COUNT(*) FILTER (WHERE outcome <> 'ok'), SUM(input_tokens)::bigint,"
        " SUM(output_tokens)::bigint, SUM(cached_tokens)::bigint, COALESCE(SUM(cost_micro_usd), 0)::bigint,"
        f" COUNT(*) FILTER (WHERE cost_micro_usd IS NULL) FROM ledger{clause} GROUP BY 1",
        *parameters,
    )
    return [UsageTotals(*row) for row in rows]
