"""The ledger's grouped rows are written on the event loop when that cannot wait (issue 22: the
thread hand-off cost more than the write): only with the connection open and idle and the write lock
free at once; a busy file sends the write to the worker thread, where it waits without blocking the
loop; checkpoints run in the worker thread every CHECKPOINT_EVERY units of work, never at a commit."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest
from store_support import START, ledger_row

from colibri_router.store.sqlite import connection as sqlite_connection
from colibri_router.store.sqlite.connection import SqliteDatabase
from colibri_router.store.sqlite.store import SqliteStore


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as reader:
        count: int = reader.execute("SELECT COUNT(*) FROM ledger").fetchone()[0]
    return count


async def test_rows_after_the_first_are_written_on_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "colibri.db"
    store = SqliteStore(path, thread_ttl_days=30)
    database: SqliteDatabase = store._database
    await store.record_call(ledger_row(START))  # opens the file: in the worker thread
    assert database.inline_writes == 0
    for _ in range(5):
        await store.record_call(ledger_row(START))
    assert database.inline_writes == 5
    assert _rows(path) == 6
    await store.aclose()


async def test_a_busy_file_sends_the_write_to_the_thread_and_the_loop_keeps_running(tmp_path: Path) -> None:
    path = tmp_path / "colibri.db"
    store = SqliteStore(path, thread_ttl_days=30)
    database: SqliteDatabase = store._database
    await store.record_call(ledger_row(START))
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
    ticks = 0
    written = anyio.Event()

    async def record() -> None:
        await store.record_call(ledger_row(START))
        written.set()

    async def tick() -> None:
        nonlocal ticks
        while not written.is_set():
            ticks += 1
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as group:
        group.start_soon(record)
        group.start_soon(tick)
        await anyio.sleep(0.3)
        assert not written.is_set()  # waiting for the lock, in the worker thread
        before = ticks
        other.execute("COMMIT")
    assert before >= 10  # the loop ran all along (0.3 s at 10 ms a tick, with room for a slow machine)
    assert database.inline_writes == 0
    assert _rows(path) == 2
    other.close()
    await store.aclose()


async def test_checkpoints_run_in_the_thread_every_so_many_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_connection, "CHECKPOINT_EVERY", 3)
    threads: list[int] = []
    checkpoint = sqlite_connection._checkpoint

    def spied(connection: sqlite3.Connection) -> None:
        threads.append(threading.get_ident())
        checkpoint(connection)

    monkeypatch.setattr(sqlite_connection, "_checkpoint", spied)
    path = tmp_path / "colibri.db"
    store = SqliteStore(path, thread_ttl_days=30)
    for _ in range(7):
        await store.record_call(ledger_row(START))
    assert len(threads) == 2
    assert threading.get_ident() not in threads
    assert await store._database.run(lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 0
    assert _rows(path) == 7
    await store.aclose()


async def test_consecutive_writes_on_the_loop_set_no_busy_timeout(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "colibri.db", thread_ttl_days=30)
    database: SqliteDatabase = store._database
    await store.record_call(ledger_row(START))  # opens the file, in the thread: the full timeout
    statements: list[str] = []
    connection = database._connection
    assert connection is not None
    connection.set_trace_callback(statements.append)
    for _ in range(3):
        await store.record_call(ledger_row(START))
    assert database.inline_writes == 3
    assert [s for s in statements if "busy_timeout" in s] == ["PRAGMA busy_timeout=0"]  # once, then kept
    await store.aclose()


async def test_after_work_in_the_thread_a_busy_file_still_never_blocks_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "colibri.db"
    store = SqliteStore(path, thread_ttl_days=30)
    database: SqliteDatabase = store._database
    await store.record_call(ledger_row(START))
    await store.record_call(ledger_row(START))  # on the loop: timeout 0
    await database.run(lambda connection: connection.execute("SELECT 1").fetchone())  # thread: full timeout
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    started = anyio.current_time()
    async with anyio.create_task_group() as group:
        group.start_soon(store.record_call, ledger_row(START))
        await anyio.sleep(0.2)
        # Had the loop's write kept the thread's timeout, it would have held the loop until now.
        assert anyio.current_time() - started < 5
        other.execute("COMMIT")
    assert database.inline_writes == 1
    assert _rows(path) == 3
    other.close()
    await store.aclose()
