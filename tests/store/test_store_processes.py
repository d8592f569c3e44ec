"""Several processes sharing one database, as one MCP host window per server process does with a
SQLite file and as a team server's replicas do with PostgreSQL: no errors, no lost rows, budgets
admitted as if one at a time, thread turns never interleaved, and a lease left by a process that
died lapses. The race of budgets and turns runs on both backends; creating the file together and
a dead holder's lease are SQLite's own here (PostgreSQL's replicas creating the schema together are
in test_store_postgres, and a lease lapses there by the same SQL rule whoever held it)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anyio
import store_worker
from store_support import open_test_store, peek_into

WORKERS = 4
WORKER_SCRIPT = Path(store_worker.__file__)


def _race(database: Path | str, thread_id: str, signals: Path) -> list[int]:
    """Run the workers from one start signal (files in ``signals``); return how many admissions each got."""
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKER_SCRIPT),
                "race",
                str(database),
                str(index),
                thread_id,
                str(signals / f"ready-{index}"),
                str(signals / "go"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(WORKERS)
    ]
    try:
        while not all((signals / f"ready-{index}").exists() for index in range(WORKERS)):
            if any(process.poll() is not None for process in processes):
                break
            time.sleep(0.01)
        (signals / "go").touch()
        outputs = [process.communicate(timeout=60) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    for process, (_, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
        assert err == ""
    return [json.loads(out)["admitted"] for out, _ in outputs]


async def _check_the_ledger(database: Path | str, admitted: list[int]) -> None:
    store = open_test_store(database, thread_ttl_days=30)
    total = (await store.usage_report(None)).total
    await store.aclose()
    assert total.calls == WORKERS * store_worker.ATTEMPTS  # no lost row
    assert total.errors == total.calls - sum(admitted)
    # Each admission is settled at exactly its estimate, so the committed spend moves only by
    # admissions: exactly ceil(limit / estimate) of them can pass, whoever wins the races.
    limit = store_worker.LIMITS.daily_micro_usd
    assert limit is not None
    assert sum(admitted) == limit // store_worker.ESTIMATE_MICRO
    assert total.cost_micro_usd == limit


def test_processes_creating_and_writing_one_file_lose_nothing(tmp_path: Path) -> None:
    """The workers create the file together, then race for one budget and write ledger rows."""
    database = tmp_path / "colibri.db"
    admitted = _race(database, "-", tmp_path)
    anyio.run(_check_the_ledger, database, admitted)


def test_processes_sharing_one_budget_and_one_thread_admit_exactly_and_never_interleave(
    database: Path | str, tmp_path: Path
) -> None:
    async def create() -> str:
        store = open_test_store(database, thread_ttl_days=30)
        thread_id = await store.create_thread(store_worker.THREAD_PRINCIPAL, "kimi", "kimi-k2")
        await store.aclose()
        return thread_id

    thread_id = anyio.run(create)
    admitted = _race(database, thread_id, tmp_path)
    anyio.run(_check_the_ledger, database, admitted)

    async def check() -> None:
        store = open_test_store(database, thread_ttl_days=30)
        messages = (await store.load_thread(thread_id, store_worker.THREAD_PRINCIPAL)).messages
        await store.aclose()
        assert len(messages) == 2 * WORKERS * store_worker.ATTEMPTS
        for position in range(0, len(messages), 2):
            user, assistant = messages[position], messages[position + 1]
            assert user["seen"] == position  # the history each call loaded was complete
            assert assistant["content"][0]["text"] == user["content"]
        tags = [message["content"] for message in messages[::2]]
        for index in range(WORKERS):
            own = [tag for tag in tags if tag.startswith(f"worker-{index}-")]
            assert own == [f"worker-{index}-{attempt}" for attempt in range(store_worker.ATTEMPTS)]

    anyio.run(check)


async def test_a_lease_left_by_a_dead_process_lapses(tmp_path: Path) -> None:
    database = tmp_path / "colibri.db"
    store = open_test_store(database, thread_ttl_days=30)
    thread_id = await store.create_thread(store_worker.THREAD_PRINCIPAL, "kimi", "kimi-k2")
    ready = tmp_path / "holding"
    holder = await anyio.run_process(
        [sys.executable, str(WORKER_SCRIPT), "hold", str(database), thread_id, str(ready)], check=False
    )
    assert holder.returncode == 0, holder.stderr
    assert ready.exists()
    # It died holding the lease (half a second long).
    assert await peek_into(database).lease_expiry(thread_id) is not None
    async with store.claim_thread(thread_id, store_worker.THREAD_PRINCIPAL, wait_s=30):
        pass
    await store.aclose()
