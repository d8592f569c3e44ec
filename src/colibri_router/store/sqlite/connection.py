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

One exception to "never the event loop": :meth:`SqliteDatabase.write`, for the ledger's grouped rows
(a few inserts, well under a millisecond), runs on the event loop when it cannot wait: the
connection open and idle (no thread holds it) and the write lock free at once (a busy timeout of 0
on the loop, the full one in the thread, each set when the connection changes sides; a busy file
sends the write to the thread as before). The hand-off to a thread cost more than the write (issue
22: ~0.3-0.4 ms of CPU per call, in thread wake-ups and GIL hand-overs). What could still block the
loop is a checkpoint's fsync, so this connection never checkpoints by itself at a commit
(``wal_autocheckpoint=0``): every ``CHECKPOINT_EVERY`` units of work, a passive checkpoint runs in
the worker thread instead.
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
# Units of work between checkpoints (SQLite's own default is a checkpoint per 1,000 WAL pages; a
# ledger group writes a few pages).
CHECKPOINT_EVERY = 256
_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


class SqliteDatabase:
    """The connection to one database file, opened lazily and reopened after a failed open."""

    def __init__(self, path: Path, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> None:
        self.path = path
        self._busy_timeout_s = busy_timeout_s
        self._connection: sqlite3.Connection | None = None
        self._limiter = anyio.CapacityLimiter(1)
        self._since_checkpoint = 0
        self._waits = True  # what the connection's busy timeout is set to (see _wait_when_busy)
        self.inline_writes = 0  # how many writes ran on the event loop (for tests and benchmarks)

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` with the connection in a worker thread, one call at a time. A cancelled
        caller still lets ``work`` finish (a transaction is never abandoned half way)."""
        result = await anyio.to_thread.run_sync(self._run_in_thread, work, limiter=self._limiter)
        await self._count_towards_checkpoint()
        return result

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """A short write transaction (``work`` says BEGIN IMMEDIATE first): on the event loop when it
        cannot wait (see the module docstring), else as :meth:`run`."""
        connection = self._connection
        if connection is not None and self._limiter.borrowed_tokens == 0:
            try:
                done, result = self._write_now(connection, work)
            except (sqlite3.Error, OSError) as error:
                raise StoreError(str(self.path), error) from error
            if done:
                self.inline_writes += 1
                await self._count_towards_checkpoint()
                return result  # type: ignore[return-value]
        return await self.run(work)

    def _write_now(
        self, connection: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]
    ) -> tuple[bool, T | None]:
        """(True, its result), or (False, None) when the write lock is taken (nothing was written)."""
        self._wait_when_busy(connection, False)
        try:
            return True, work(connection)
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode in _BUSY_CODES and not connection.in_transaction:
                return False, None
            raise

    def _wait_when_busy(self, connection: sqlite3.Connection, wait: bool) -> None:
        """The busy timeout for what runs next: 0 on the event loop, the full one in the thread. Set
        only when it changes: consecutive ledger writes on the loop then run no PRAGMA at all."""
        if wait != self._waits:
            connection.execute(f"PRAGMA busy_timeout={round(self._busy_timeout_s * 1000) if wait else 0}")
            self._waits = wait

    async def _count_towards_checkpoint(self) -> None:
        self._since_checkpoint += 1
        if self._since_checkpoint >= CHECKPOINT_EVERY:
            self._since_checkpoint = 0
            await anyio.to_thread.run_sync(self._run_in_thread, _checkpoint, limiter=self._limiter)

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self._close, limiter=self._limiter)

    def _run_in_thread(self, work: Callable[[sqlite3.Connection], T]) -> T:
        try:
            if self._connection is None:
                self._connection = self._open()
                self._waits = True  # connect() set the full timeout
            self._wait_when_busy(self._connection, True)
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
            # Checkpoints run in the worker thread (see the module docstring), never at a commit.
            connection.execute("PRAGMA wal_autocheckpoint=0")
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


def _checkpoint(connection: sqlite3.Connection) -> None:
    """Copy the WAL's pages into the database where no reader needs them (PASSIVE never waits)."""
    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
