"""Ledger SQL: one row per call, and the sums usage reports are made of."""

from __future__ import annotations

from datetime import datetime

from colibri_router.store.postgres.connection import Connection
from colibri_router.store.postgres.filters import where
from colibri_router.store.records import GroupBy, LedgerRow, UsageTotals

_GROUP_KEYS: dict[GroupBy | None, str] = {
    None: "NULL::text",
    "provider": "provider",
    "model": "model",
    "day": "to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
}


async def insert(connection: Connection, row: LedgerRow) -> None:
    await connection.execute(
        "INSERT INTO ledger (at, principal, thread_id, provider, model, input_tokens, output_tokens,"
        " cached_tokens, cache_write_tokens, reasoning_tokens, cost_micro_usd, latency_ms, outcome, kind)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        row.at,
        row.principal,
        row.thread_id,
        row.provider,
        row.model,
        row.input_tokens,
        row.output_tokens,
        row.cached_tokens,
        row.cache_write_tokens,
        row.reasoning_tokens,
        row.cost_micro_usd,
        row.latency_ms,
        row.outcome,
        row.kind,
    )


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
