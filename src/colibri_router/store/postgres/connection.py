"""Connections to one PostgreSQL database: a pool per event loop, made on first use, and every
failure of the database turned into a :class:`StoreError` naming it (its URL without the password).

Why a pool per loop: an asyncpg connection belongs to the event loop that opened it, and one store
may be used from several loops one after another (each ``asyncio.run`` of a command, each test's
loop). So each loop gets its own pool the first time it needs one, and the schema is brought up to
date on that pool's first connection (a cheap check once it is). A loop's pool is closed when
that loop shuts down, or when the store is closed from it, whichever comes first.

Nothing connects at construction; a failed connection is tried again on the next call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import anyio
import asyncpg

from colibri_router.store.errors import StoreError
from colibri_router.store.postgres.schema import SchemaTooNew, migrate

if TYPE_CHECKING:
    from asyncpg.pool import Pool, PoolConnectionProxy

T = TypeVar("T")

Connection: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"
"""A connection lent by a pool for one unit of work (generic for the type checker only)."""

DEFAULT_MAX_CONNECTIONS = 10
DEFAULT_CONNECT_TIMEOUT_S = 10.0
_STATEMENT_TIMEOUT_S = 60.0
_CLOSE_TIMEOUT_S = 5.0

# What a database that cannot be reached or used raises: the server's errors, the client's (a closed
# connection, a bad option in the URL; and a connection a server shutdown left mid-operation, which
# asyncpg reports as an internal client error), the network's (refused, unreachable, timed out:
# OSError), and a schema written by a newer colibri-router.
_DATABASE_FAILURES = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
    SchemaTooNew,
)


@dataclass
class _LoopPool:
    """One event loop's pool, and the async generator that closes it when the loop shuts down."""

    creating: asyncio.Lock = field(default_factory=asyncio.Lock)
    pool: Pool[asyncpg.Record] | None = None
    closer: AsyncGenerator[None, None] | None = None


class PostgresDatabase:
    """The database at ``url``; ``location`` is how messages name it (the URL without password)."""

    def __init__(self, url: str, location: str, *, max_connections: int, connect_timeout_s: float) -> None:
        if max_connections < 1 or connect_timeout_s <= 0:
            raise ValueError("max_connections must be at least 1 and connect_timeout_s above 0")
        self.location = location
        self._url = url
        self._max_connections = max_connections
        self._connect_timeout_s = connect_timeout_s
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}

    async def run(self, work: Callable[[Connection], Awaitable[T]]) -> T:
        """Run ``work`` on a connection of this loop's pool. The store's own errors (a thread not
        found, a budget exceeded) pass through unchanged; the database's become a StoreError.

        A caller cancelled while ``work`` runs still lets it finish, as with SQLite: a transaction
        is never abandoned half way (asyncpg would have to roll it back on a connection it then
        distrusts), nor a commit left without its caller knowing. A statement taking longer than
        a minute (a server that stopped answering) fails instead, so no caller waits forever."""
        with self.failures_as_store_errors():
            pool = await self._pool()
            async with pool.acquire() as connection:
                with anyio.CancelScope(shield=True):
                    result = await work(connection)
        return result

    async def connect(self) -> asyncpg.Connection[asyncpg.Record]:
        """A connection of its own, outside the pools, for a caller that keeps it (a listener)."""
        with self.failures_as_store_errors():
            return await asyncpg.connect(self._url, timeout=self._connect_timeout_s)

    @contextmanager
    def failures_as_store_errors(self) -> Iterator[None]:
        try:
            yield
        except _DATABASE_FAILURES as error:
            raise StoreError(self.location, error, backend="postgresql") from error

    async def aclose(self) -> None:
        """Close this loop's pool. A pool of another loop that is still open is terminated in that
        loop (its connections cannot be closed politely from here); a closed loop's is forgotten."""
        current = asyncio.get_running_loop()
        for loop, entry in list(self._pools.items()):
            if loop is current and entry.closer is not None:
                await entry.closer.aclose()  # its `finally` closes the pool now, not at the loop's end
            elif not loop.is_closed() and entry.pool is not None:
                loop.call_soon_threadsafe(entry.pool.terminate)
        self._pools.clear()

    async def _pool(self) -> Pool[asyncpg.Record]:
        loop = asyncio.get_running_loop()
        entry = self._pools.get(loop)
        if entry is None:
            self._forget_closed_loops()
            entry = self._pools[loop] = _LoopPool()
        if entry.pool is None:
            async with entry.creating:  # callers arriving together on a new loop share one pool
                if entry.pool is None:
                    entry.pool = await self._open_pool()
                    entry.closer = self._closed_with_the_loop(loop)
                    await anext(entry.closer)
        return entry.pool

    async def _open_pool(self) -> Pool[asyncpg.Record]:
        # min_size=0: no connection is made before one is needed, and none is kept open by a
        # background task, so a pool costs nothing to a loop that ends soon.
        pool = await asyncpg.create_pool(
            self._url,
            min_size=0,
            max_size=self._max_connections,
            timeout=self._connect_timeout_s,
            command_timeout=_STATEMENT_TIMEOUT_S,
        )
        try:
            async with pool.acquire() as connection:
                await migrate(connection)
        except BaseException:
            pool.terminate()
            raise
        return pool

    async def _closed_with_the_loop(self, loop: asyncio.AbstractEventLoop) -> AsyncGenerator[None, None]:
        """Waits, suspended, for the loop to shut down its async generators, which ``asyncio.run``
        and ``asyncio.Runner`` (so ``anyio.run`` and pytest-asyncio too) do just before closing the
        loop: the loop's pool is closed then, while the loop can still say goodbye to the server.
        A loop closed without that step leaves its connections to the garbage collector."""
        try:
            yield
        finally:
            await self._close_pool(loop)

    async def _close_pool(self, loop: asyncio.AbstractEventLoop) -> None:
        entry = self._pools.pop(loop, None)
        if entry is None or entry.pool is None:
            return
        try:
            # A pool's close waits for connections still lent out; the timeout bounds that wait.
            await asyncio.wait_for(entry.pool.close(), _CLOSE_TIMEOUT_S)
        except _DATABASE_FAILURES:
            entry.pool.terminate()

    def _forget_closed_loops(self) -> None:
        for loop in [loop for loop in self._pools if loop.is_closed()]:
            del self._pools[loop]
