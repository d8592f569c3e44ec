"""A separate process writing to a shared store, for the multi-process tests (run as a script).

``race DB INDEX THREAD_ID READY GO``: say READY, wait for GO, then (opening the database, perhaps
creating it, at the same moment as the other workers) per attempt ask for a budget reservation
(settled at exactly its estimate, or a refused call's row) and, unless THREAD_ID is ``-``, append a
user/assistant pair to the shared thread under a lease; print ``{"admitted": n}``.

``hold DB THREAD_ID READY``: take the thread's lease (lasting half a second), say READY, and die
without releasing it.

DB is a SQLite file's path or a PostgreSQL URL.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
from store_support import open_test_store

from colibri_router.store import BudgetExceeded, BudgetLimits, LedgerRow

ATTEMPTS = 25
ESTIMATE_MICRO = 1_000
LIMITS = BudgetLimits(daily_micro_usd=50_000)
THREAD_PRINCIPAL = "team"


def ledger_row(index: int, cost: int | None, outcome: str) -> LedgerRow:
    return LedgerRow(
        at=datetime.now(UTC),
        principal=f"worker-{index}",
        thread_id=None,
        provider="kimi",
        model="kimi-k2",
        input_tokens=10,
        output_tokens=5,
        cost_micro_usd=cost,
        latency_ms=1,
        outcome=outcome,
        kind=None if outcome == "ok" else outcome,
    )


async def race(database: Path | str, index: int, thread_id: str, ready: Path, go: Path) -> None:
    store = open_test_store(database, thread_ttl_days=30)
    ready.touch()
    while not go.exists():  # noqa: ASYNC110 (the start signal comes from another process, through a file)
        await anyio.sleep(0.005)
    admitted = 0
    for attempt in range(ATTEMPTS):
        try:
            reservation = await store.reserve_budget(f"worker-{index}", ESTIMATE_MICRO, LIMITS)
        except BudgetExceeded:
            await store.record_call(ledger_row(index, None, "BUDGET_EXCEEDED"))
        else:
            admitted += 1
            await store.settle(reservation, ledger_row(index, ESTIMATE_MICRO, "ok"))
        if thread_id == "-":
            continue
        async with store.claim_thread(thread_id, THREAD_PRINCIPAL, wait_s=30) as lease:
            seen = (await store.load_thread(thread_id, THREAD_PRINCIPAL)).turns
            tag = f"worker-{index}-{attempt}"
            pair = [
                {"role": "user", "content": tag, "seen": seen},
                {"role": "assistant", "content": [{"type": "text", "text": tag}], "seen": seen},
            ]
            await store.append_turns(thread_id, THREAD_PRINCIPAL, pair, "kimi", "kimi-k2", lease=lease)
    await store.aclose()
    print(json.dumps({"admitted": admitted}))


async def hold_and_die(database: Path | str, thread_id: str, ready: Path) -> None:
    store = open_test_store(database, thread_ttl_days=30, lease_s=0.5)
    async with store.claim_thread(thread_id, THREAD_PRINCIPAL, wait_s=0):
        ready.touch()
        os._exit(0)  # no release, no cleanup: what a crash looks like to the other processes


def main(arguments: list[str]) -> None:
    mode, database_argument, *rest = arguments
    database = database_argument if database_argument.startswith("postgresql://") else Path(database_argument)
    if mode == "race":
        index, thread_id, ready, go = rest
        anyio.run(race, database, int(index), thread_id, Path(ready), Path(go))
    else:
        thread_id, ready = rest
        anyio.run(hold_and_die, database, thread_id, Path(ready))


if __name__ == "__main__":
    main(sys.argv[1:])
