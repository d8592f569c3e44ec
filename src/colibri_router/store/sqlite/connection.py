"""One serialized SQLite connection per store, used from worker threads, never the event loop.

Why one connection: every statement the store runs takes well under a millisecond, and SQLite
admits one writer at a time anyway, so a single connection loses nothing measurable and has no
pool to reason about. Callers queue on a one-token ``CapacityLimiter`` *in the event loop*, not in
threads, so a burst of store calls never takes the worker threads that DNS look-ups and other
blocking work need. Between processes, SQLite's own locking orders writers: WAL lets readers run
beside the writer, every write transaction starts with ``BEGIN IMMEDIATE`` (it queues for the
write lock at its start, so it cannot fail half way on a lock a reader upgraded), and the busy
timeout makes a writer wait for another process's transaction instead of failing.

The file and its directory are created on the first call, never at import or construction. Any
``sqlite3`` or OS error becomes a :class:`StoreError` carrying the path and the cause.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from colibri_router.store.errors import StoreError
from colibri_router.store.sqlite.schema import SchemaTooNew, migrate

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT_S = 10.0
_WAL_SWITCH_RETRY_S = 0.01


class SqliteDatabase:
    """The connection to one database file, opened lazily and reopened after a failed open."""

    def __init__(self, path: Path, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> None:
        self.path = path
        self._busy_timeout_s = busy_timeout_s
        self._connection: sqlite3.Connection | None = None
        self._limiter = anyio.CapacityLimiter(1)

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` with the connection in a worker thread, one call at a time. A cancelled
        caller still lets ``work`` finish (a transaction is never abandoned half way)."""
        return await anyio.to_thread.run_sync(self._run_in_thread, work, limiter=self._limiter)

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self._close, limiter=self._limiter)

    def _run_in_thread(self, work: Callable[[sqlite3.Connection], T]) -> T:
        try:
            if self._connection is None:
                self._connection = self._open()
            return work(self._connection)
        except (sqlite3.Error, OSError, SchemaTooNew) as error:
            raise StoreError(str(self.path), error) from error

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: the module never opens transactions behind our back; we say BEGIN.
        connection = sqlite3.connect(
            self.path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            self._use_wal(connection)
            # NORMAL is durable across process crashes in WAL mode; only a power cut can lose the
            # last transactions, an acceptable price for not syncing on every ledger row.
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA foreign_keys=ON")
            migrate(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _use_wal(self, connection: sqlite3.Connection) -> None:
        """Switch a new file to WAL (the mode then stays with the file). The switch needs the file to
        itself, and SQLite reports a busy file at once here rather than calling the busy handler,
        so when several processes create the file together we wait for it ourselves."""
        if connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
            return
        deadline = time.monotonic() + self._busy_timeout_s
        while True:
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                    raise
                time.sleep(_WAL_SWITCH_RETRY_S)

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
