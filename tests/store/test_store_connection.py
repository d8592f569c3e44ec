"""The serialized connection: work runs in a worker thread, one unit at a time, and a cancelled
caller never abandons a unit of work half done."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import anyio.to_thread

from colibri_router.store.sqlite.connection import SqliteDatabase


async def test_work_runs_off_the_event_loop_one_unit_at_a_time(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "colibri.db")
    loop_thread = threading.get_ident()
    running = 0
    most_at_once = 0
    threads: set[int] = set()

    def work(connection: sqlite3.Connection) -> None:
        nonlocal running, most_at_once
        running += 1
        most_at_once = max(most_at_once, running)
        threads.add(threading.get_ident())
        connection.execute("SELECT 1")
        running -= 1

    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(database.run, work)
    assert most_at_once == 1
    assert loop_thread not in threads
    await database.aclose()


async def test_a_cancelled_caller_lets_its_work_finish(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "colibri.db")
    await database.run(lambda connection: connection.execute("CREATE TABLE done (x)"))
    started, release = threading.Event(), threading.Event()

    def slow_write(connection: sqlite3.Connection) -> None:
        started.set()
        release.wait()
        connection.execute("INSERT INTO done VALUES (1)")

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(database.run, slow_write)
            await anyio.to_thread.run_sync(started.wait)
            scope.cancel()
            release.set()
    rows = await database.run(lambda connection: connection.execute("SELECT COUNT(*) FROM done").fetchone()[0])
    assert rows == 1
    await database.aclose()
