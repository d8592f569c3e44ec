"""The /ui jobs page's read (``Store.list_team_jobs``), the same on SQLite and PostgreSQL: every
member's jobs or one member's, newest first, limited, without the expired ones."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from store_support import START, FakeClock, open_test_store

from colibri_router.store import JobRecord, Store
from colibri_router.store.jobs import new_job_id

TTL_S = 3600.0
OWNER = "host-a:123:abcd"


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> AsyncIterator[Store]:
    database: Path | str = tmp_path / "colibri.db"
    if request.param == "postgresql":
        database = request.getfixturevalue("fresh_postgres_database")()
    opened = open_test_store(database, thread_ttl_days=30, clock=clock)
    yield opened
    await opened.aclose()


def job(principal: str, second: int) -> JobRecord:
    at = START + timedelta(seconds=second)
    return JobRecord(new_job_id(), principal, "router_call", "running", None, 0, at, at, OWNER)


async def _filled(store: Store) -> list[JobRecord]:
    made = [job(principal, second) for second, principal in enumerate(["alice", "bob", "alice", "carol", "bob"])]
    for record in made:
        await store.create_job(record, TTL_S)
    return made


async def test_every_members_jobs_newest_first(store: Store) -> None:
    made = await _filled(store)

    listed = await store.list_team_jobs(None, 50, TTL_S)

    assert listed == list(reversed(made))


async def test_one_members_jobs_only(store: Store) -> None:
    made = await _filled(store)

    listed = await store.list_team_jobs("bob", 50, TTL_S)

    assert [record.job_id for record in listed] == [made[4].job_id, made[1].job_id]
    assert await store.list_team_jobs("nobody", 50, TTL_S) == []


async def test_the_limit_keeps_the_newest(store: Store) -> None:
    made = await _filled(store)

    assert [record.job_id for record in await store.list_team_jobs(None, 2, TTL_S)] == [
        made[4].job_id,
        made[3].job_id,
    ]
    with pytest.raises(ValueError, match="limit"):
        await store.list_team_jobs(None, 0, TTL_S)


async def test_an_expired_job_is_not_listed(store: Store, clock: FakeClock) -> None:
    ended, running = job("alice", 0), job("bob", 1)
    for record in (ended, running):
        await store.create_job(record, TTL_S)
    await store.finish_job(ended.job_id, OWNER, "failed", "{}", None)

    clock.advance(seconds=TTL_S + 1)

    assert [record.job_id for record in await store.list_team_jobs(None, 50, TTL_S)] == [running.job_id]
