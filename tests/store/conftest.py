"""Store fixtures: a clock the test moves by hand, and stores of either backend on a database of the
test's own. Every test asking for ``store``, ``new_store``, ``database`` or ``peek`` runs twice: on
a SQLite file in its temp directory, and on a fresh database of the throwaway PostgreSQL server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from store_support import AnyStore, DatabasePeek, FakeClock, StoreFactory, open_test_store, peek_into


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where the test's stores keep their data: a SQLite file's path, or a new PostgreSQL database's URL."""
    if request.param == "sqlite":
        return tmp_path / "colibri.db"
    fresh_postgres_database = request.getfixturevalue("fresh_postgres_database")
    url: str = fresh_postgres_database()
    return url


@pytest.fixture
async def new_store(database: Path | str, clock: FakeClock) -> AsyncIterator[StoreFactory]:
    """Opens stores on the test's database (each like another process, or another replica: its own
    connection or pool); options as the backends take them. All are closed after the test."""
    opened: list[AnyStore] = []

    def new(**options: Any) -> AnyStore:
        opened.append(open_test_store(database, **({"thread_ttl_days": 30, "clock": clock} | options)))
        return opened[-1]

    yield new
    for store in opened:
        await store.aclose()


@pytest.fixture
def store(new_store: StoreFactory) -> AnyStore:
    return new_store()


@pytest.fixture
def peek(database: Path | str) -> DatabasePeek:
    return peek_into(database)
