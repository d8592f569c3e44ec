"""Helpers shared by the store tests (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, TypeAlias

import asyncpg
import pytest

from colibri_router.store import BudgetLimits, LedgerRow, StoreError
from colibri_router.store.postgres import PostgresStore
from colibri_router.store.sqlite import SqliteStore
from colibri_router.store.sqlite.timestamps import from_ms

START = datetime(2025, 3, 14, 12, 0, tzinfo=UTC)

AnyStore: TypeAlias = SqliteStore | PostgresStore
StoreFactory: TypeAlias = Callable[..., AnyStore]


class FakeClock:
    """The current time, as far as the store knows; moves only when the test says so."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def ledger_row(at: datetime, **fields: Any) -> LedgerRow:
    """A successful call's row with small defaults; ``fields`` override them."""
    values: dict[str, Any] = {
        "principal": "alice",
        "thread_id": None,
        "provider": "kimi",
        "model": "kimi-k2",
        "input_tokens": 100,
        "output_tokens": 20,
        "cost_micro_usd": 1_000,
        "latency_ms": 50,
    }
    return LedgerRow(at=at, **(values | fields))


async def every_operation_fails(store: AnyStore) -> list[StoreError]:
    """Tries one operation of each kind; each must raise a StoreError, returned in order."""
    attempts = [
        store.create_thread("alice", "kimi", "kimi-k2"),
        store.load_thread("th_x", "alice"),
        store.list_threads("alice"),
        store.usage_report("alice"),
        store.reserve_budget("alice", 1, BudgetLimits(daily_micro_usd=10)),
    ]
    errors = []
    for attempt in attempts:
        with pytest.raises(StoreError) as raised:
            await attempt
        errors.append(raised.value)
    return errors


def open_test_store(database: Path | str, **options: Any) -> AnyStore:
    """A store of the backend ``database`` belongs to: a SQLite file's path or a PostgreSQL URL."""
    if isinstance(database, Path):
        return SqliteStore(database, **options)
    return PostgresStore(database, **options)


class DatabasePeek(Protocol):
    """Reads a store's database behind its back, to see what the store left there."""

    async def count(self, table: str) -> int: ...

    async def lease_expiry(self, thread_id: str) -> datetime | None: ...

    async def execute(self, statement: str) -> None:
        """A statement both dialects read the same way (``DELETE FROM ledger``, say)."""
        ...


def peek_into(database: Path | str) -> DatabasePeek:
    return _SqlitePeek(database) if isinstance(database, Path) else _PostgresPeek(database)


class _SqlitePeek:
    def __init__(self, path: Path) -> None:
        self._path = path

    async def count(self, table: str) -> int:
        count: int = self._query(f"SELECT COUNT(*) FROM {table}")
        return count

    async def lease_expiry(self, thread_id: str) -> datetime | None:
        expires_ms = self._query("SELECT lease_expires_at_ms FROM threads WHERE thread_id = ?", thread_id)
        return None if expires_ms is None else from_ms(expires_ms)

    async def execute(self, statement: str) -> None:
        with sqlite3.connect(self._path) as connection:
            connection.execute(statement)
        connection.close()

    def _query(self, query: str, *parameters: object) -> Any:
        with sqlite3.connect(self._path) as connection:
            value = connection.execute(query, parameters).fetchone()[0]
        connection.close()
        return value


class _PostgresPeek:
    def __init__(self, url: str) -> None:
        self._url = url

    async def count(self, table: str) -> int:
        count: int = await self._query(f"SELECT COUNT(*) FROM {table}")
        return count

    async def lease_expiry(self, thread_id: str) -> datetime | None:
        expires_at: datetime | None = await self._query(
            "SELECT lease_expires_at FROM threads WHERE thread_id = $1", thread_id
        )
        return expires_at

    async def execute(self, statement: str) -> None:
        connection = await asyncpg.connect(self._url)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    async def _query(self, query: str, *parameters: object) -> Any:
        connection = await asyncpg.connect(self._url)
        try:
            return await connection.fetchval(query, *parameters)
        finally:
            await connection.close()
