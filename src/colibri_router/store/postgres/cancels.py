"""Cancellations passed between the processes sharing a database: NOTIFY publishes a key, LISTEN
hears it.

A published key reaches every process listening at that moment, the publisher included; the server
keeps no notification for later, so a process that starts listening afterwards never hears it. A
listener holds one connection of its own: a LISTEN belongs to a session, and a pooled connection is
only lent for a moment. When that connection is lost (the server restarted, the network failed, an
administrator ended the session) the listener logs it and connects again, waiting 0.1 s and then
twice as long each time, up to 5 s; keys published meanwhile are missed, which costs a cancellation
that comes late (the call runs to its end), never a wrong one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import Any

import asyncpg

from colibri_router.logs import get_logger
from colibri_router.store.errors import StoreError
from colibri_router.store.postgres.connection import Connection, PostgresDatabase

CHANNEL = "colibri_cancel"
MAX_KEY_BYTES = 7999
"""A NOTIFY payload must be shorter than 8000 bytes (the server's default build)."""

_FIRST_RETRY_S = 0.1
_LONGEST_RETRY_S = 5.0
_CLOSE_TIMEOUT_S = 5.0


def check_key(key: str) -> None:
    """A key fits in a NOTIFY payload: under 8000 bytes in UTF-8, and no NUL (text cannot hold it)."""
    if len(key.encode()) > MAX_KEY_BYTES or "\x00" in key:
        raise ValueError(f"a cancel key must be text of at most {MAX_KEY_BYTES} UTF-8 bytes without NUL")


async def publish(connection: Connection, key: str) -> None:
    await connection.execute("SELECT pg_notify($1, $2)", CHANNEL, key)


class CancelListener:
    """``async with`` it to hear every published key: ``on_cancel(key)`` runs in the event loop
    that entered it. Entering fails with a StoreError when the database cannot be reached."""

    def __init__(self, database: PostgresDatabase, on_cancel: Callable[[str], None]) -> None:
        self._database = database
        self._on_cancel = on_cancel
        self._connection: asyncpg.Connection[asyncpg.Record] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._closing = False

    async def __aenter__(self) -> None:
        self._connection = await self._listen()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._closing = True
        if self._reconnecting is not None:
            self._reconnecting.cancel()
            await asyncio.wait({self._reconnecting})  # its cleanup done; its cancellation is not ours
        if self._connection is not None:
            connection, self._connection = self._connection, None
            try:
                await connection.close(timeout=_CLOSE_TIMEOUT_S)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                connection.terminate()  # it was going anyway; nothing was lost

    async def _listen(self) -> asyncpg.Connection[asyncpg.Record]:
        connection = await self._database.connect()
        try:
            with self._database.failures_as_store_errors():
                await connection.add_listener(CHANNEL, self._deliver)
        except BaseException:
            connection.terminate()
            raise
        connection.add_termination_listener(self._lost)
        return connection

    def _deliver(self, _connection: Any, _sender_pid: int, _channel: str, payload: object) -> None:
        self._on_cancel(str(payload))

    def _lost(self, _connection: Any) -> None:
        if self._closing:
            return
        get_logger(__name__).warning(
            "cancel listener lost its connection; reconnecting", database=self._database.location
        )
        self._connection = None
        self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        delay = _FIRST_RETRY_S
        while True:
            await asyncio.sleep(delay)
            try:
                self._connection = await self._listen()
            except StoreError as error:
                get_logger(__name__).warning(
                    "cancel listener could not reconnect", database=error.path, error=str(error.cause)
                )
                delay = min(delay * 2, _LONGEST_RETRY_S)
            else:
                get_logger(__name__).info("cancel listener reconnected", database=self._database.location)
                return
