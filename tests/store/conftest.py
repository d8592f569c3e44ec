"""Store fixtures: a clock the test moves by hand, and a SQLite store in the test's temp directory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from store_support import FakeClock

from colibri_router.store.sqlite import SqliteStore


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def store(tmp_path: Path, clock: FakeClock) -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "colibri.db", thread_ttl_days=30, clock=clock)
    yield opened
    await opened.aclose()
