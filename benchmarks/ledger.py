"""Benchmark 10: what a ledger row costs the server, one commit per row against grouped commits.

In one process, ``WRITERS`` tasks write ledger rows without pause for ``WINDOW_S`` seconds, first one
row per commit (and per hand-off to SQLite's worker thread: what ``record_call`` did before grouped
commits), then through ``record_call`` (rows of concurrent calls share a commit), in alternating
rounds on one SQLite file. Reported: the process's CPU time per row (``time.process_time``, every
thread included), which is what a row takes from the server's calls, and rows per second. The same
runs on PostgreSQL: the database of ``COLIBRI_BENCH_DATABASE_URL=postgresql://...``, else a throwaway
cluster (``postgres_db.py``: fsync and synchronous_commit off; without PostgreSQL the row is skipped,
with the reason). The database server's own CPU is not counted here (benchmark 9 shows it).
Run alone: ``uv run python -m benchmarks.ledger``.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import anyio

from benchmarks import postgres_db
from benchmarks.measure import Report, Row, median, ms
from colibri_router.store import LedgerRow
from colibri_router.store.postgres import PostgresStore
from colibri_router.store.sqlite import SqliteStore

WRITERS = 8
WINDOW_S = 2.0
ROUNDS = 3


def _row(index: int) -> LedgerRow:
    return LedgerRow(
        at=datetime.now(UTC),
        principal="bench",
        thread_id=None,
        provider="kimi",
        model="kimi-k2-0905-preview",
        input_tokens=20,
        output_tokens=10,
        cost_micro_usd=30,
        latency_ms=index % 100,
        outcome="ok",
    )


async def _window(write: Callable[[LedgerRow], Awaitable[None]]) -> tuple[float, float]:
    """(CPU seconds per row, rows per second) of ``WRITERS`` tasks writing for ``WINDOW_S``."""
    rows = 0
    cpu, wall = time.process_time(), time.perf_counter()
    ends = wall + WINDOW_S

    async def writer() -> None:
        nonlocal rows
        while time.perf_counter() < ends:
            await write(_row(rows))
            rows += 1

    async with anyio.create_task_group() as group:
        for _ in range(WRITERS):
            group.start_soon(writer)
    return (time.process_time() - cpu) / rows, rows / (time.perf_counter() - wall)


async def _compare(name: str, store: SqliteStore | PostgresStore) -> list[Row]:
    from colibri_router.store.postgres import ledger as postgres_ledger
    from colibri_router.store.sqlite import ledger as sqlite_ledger

    database = store._database
    if isinstance(store, SqliteStore):

        async def one_per_commit(row: LedgerRow) -> None:
            await database.run(lambda c: sqlite_ledger.insert(c, row))  # type: ignore[arg-type]
    else:

        async def one_per_commit(row: LedgerRow) -> None:
            await database.run(lambda c: postgres_ledger.insert(c, row))  # type: ignore[arg-type]

    await store.record_call(_row(0))  # creates the schema
    single: list[tuple[float, float]] = []
    grouped: list[tuple[float, float]] = []
    for _ in range(ROUNDS):
        single.append(await _window(one_per_commit))
        grouped.append(await _window(store.record_call))
    cpu_single, cpu_grouped = median([c for c, _ in single]), median([c for c, _ in grouped])
    rate_single, rate_grouped = median([r for _, r in single]), median([r for _, r in grouped])
    return [
        Row(
            f"10 ledger row, {name}: grouped commits vs one commit per row",
            f"{ms(cpu_grouped)} CPU per row grouped vs {ms(cpu_single)} one per commit "
            f"({rate_grouped:.0f} vs {rate_single:.0f} rows/s; {WRITERS} writers, median of {ROUNDS} windows of "
            f"{WINDOW_S:g} s)",
            "≤ 0.2 ms per call",
            cpu_grouped <= 0.0002,
        )
    ]


async def run() -> Report:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="colibri-bench-ledger-") as directory:
        store = SqliteStore(Path(directory) / "colibri.db", thread_ttl_days=30)
        try:
            rows += await _compare("SQLite", store)
        finally:
            await store.aclose()
    with ExitStack() as stack:
        try:  # a cluster takes a few seconds to start: off the loop
            database = await anyio.to_thread.run_sync(stack.enter_context, postgres_db.database())
        except postgres_db.Unavailable as exc:
            rows.append(Row("10 ledger row, PostgreSQL", f"skipped: {exc}", "≤ 0.2 ms per call", None))
        else:
            postgres = PostgresStore(database.url, thread_ttl_days=30)
            try:
                rows += await _compare("PostgreSQL", postgres)
            finally:
                await postgres.aclose()
    return Report(rows)


if __name__ == "__main__":
    from benchmarks.measure import table

    print(table(anyio.run(run).rows))
