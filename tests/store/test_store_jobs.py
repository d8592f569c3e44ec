"""The store's jobs (colibri_router.store.jobs, docs/jobs.md), the same on SQLite, PostgreSQL and the
memory of a process whose store is off: a job's row is its principal's only, its owner alone records
progress, it ends once, its result comes back byte for byte, and it is gone COLIBRI_JOB_TTL_S after
it ended."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_support import START, FakeClock, open_test_store

from colibri_router.jobs.memory import MemoryJobs
from colibri_router.jobs.model import Final
from colibri_router.jobs.runner import JobStore
from colibri_router.store import JobRecord
from colibri_router.store.jobs import new_job_id

TTL_S = 3600.0
OWNER = "host-a:123:abcd"


@pytest.fixture(params=["sqlite", "postgresql", "memory"])
async def jobs(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> AsyncIterator[JobStore]:
    if request.param == "memory":
        yield MemoryJobs(clock)
        return
    database: Path | str = tmp_path / "colibri.db"
    if request.param == "postgresql":
        database = request.getfixturevalue("fresh_postgres_database")()
    store = open_test_store(database, thread_ttl_days=30, clock=clock)
    yield store
    await store.aclose()


def job(principal: str = "alice", **fields: Any) -> JobRecord:
    values: dict[str, Any] = {
        "job_id": new_job_id(),
        "principal": principal,
        "tool": "router_call",
        "status": "running",
        "progress": None,
        "cost_micro_usd": 0,
        "started_at": START,
        "updated_at": START,
        "owner": OWNER,
    }
    return JobRecord(**(values | fields))


async def test_a_job_is_read_back_by_its_principal_only(jobs: JobStore) -> None:
    mine = job()
    await jobs.create_job(mine, TTL_S)

    assert await jobs.load_job(mine.job_id, "alice", TTL_S) == mine
    assert await jobs.load_job(mine.job_id, "bob", TTL_S) is None
    assert await jobs.load_job("job_unknown", "alice", TTL_S) is None
    assert await jobs.list_jobs("bob", 20, TTL_S) == []
    assert not await jobs.request_job_cancel(mine.job_id, "bob")


async def test_only_the_owner_records_progress_and_sees_a_cancel(jobs: JobStore, clock: FakeClock) -> None:
    running = job()
    await jobs.create_job(running, TTL_S)
    clock.advance(seconds=2)

    assert await jobs.update_job(running.job_id, OWNER, "1/2 gpt answered in 1.0 s", 1500) is False
    assert await jobs.update_job(running.job_id, "host-b:9:ffff", "not mine", 9) is None
    assert await jobs.request_job_cancel(running.job_id, "alice")
    assert await jobs.job_cancel_requested(running.job_id)
    assert await jobs.update_job(running.job_id, OWNER, "2/2", 2500) is True
    stored = await jobs.load_job(running.job_id, "alice", TTL_S)
    assert stored is not None
    assert (stored.progress, stored.cost_micro_usd, stored.cancel_requested) == ("2/2", 2500, True)
    assert stored.updated_at == START + timedelta(seconds=2)


async def test_a_job_ends_once_and_then_takes_no_progress(jobs: JobStore) -> None:
    running = job()
    await jobs.create_job(running, TTL_S)
    result = Final({"content": "done"}, '{"content":"done"}', is_error=False).to_json()

    assert not await jobs.finish_job(running.job_id, "host-b:9:ffff", "succeeded", result, 10)
    assert await jobs.finish_job(running.job_id, OWNER, "succeeded", result, 10)
    assert not await jobs.finish_job(running.job_id, None, "failed", "{}", None)  # a late "stopped" changes nothing
    assert await jobs.update_job(running.job_id, OWNER, "late", 99) is None
    assert not await jobs.request_job_cancel(running.job_id, "alice")
    stored = await jobs.load_job(running.job_id, "alice", TTL_S)
    assert stored is not None
    assert (stored.status, stored.result, stored.cost_micro_usd) == ("succeeded", result, 10)


async def test_an_ended_job_is_gone_after_its_ttl_and_a_running_one_never(jobs: JobStore, clock: FakeClock) -> None:
    ended, running = job(), job()
    for record in (ended, running):
        await jobs.create_job(record, TTL_S)
    await jobs.finish_job(ended.job_id, OWNER, "failed", "{}", None)

    clock.advance(seconds=TTL_S - 1)
    assert await jobs.load_job(ended.job_id, "alice", TTL_S) is not None
    clock.advance(seconds=2)
    assert await jobs.load_job(ended.job_id, "alice", TTL_S) is None
    await jobs.create_job(job(), TTL_S)  # creating purges
    assert {record.job_id for record in await jobs.list_jobs("alice", 20, TTL_S)} >= {running.job_id}
    assert ended.job_id not in {record.job_id for record in await jobs.list_jobs("alice", 20, TTL_S)}


async def test_the_list_is_newest_first_and_limited(jobs: JobStore) -> None:
    made = [job(started_at=START + timedelta(seconds=index)) for index in range(5)]
    for record in made:
        await jobs.create_job(record, TTL_S)

    listed = await jobs.list_jobs("alice", 3, TTL_S)

    assert [record.job_id for record in listed] == [record.job_id for record in reversed(made)][:3]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(structured=st.dictionaries(st.text(max_size=8), _JSON, max_size=4), is_error=st.booleans())
async def test_a_result_comes_back_exactly_as_stored(
    jobs: JobStore, structured: dict[str, Any], is_error: bool
) -> None:
    text = ("CODE: message\n" if is_error else "") + json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    final = Final(structured, text, is_error)
    running = job()
    await jobs.create_job(running, TTL_S)
    await jobs.finish_job(running.job_id, OWNER, "failed" if is_error else "succeeded", final.to_json(), 0)

    stored = await jobs.load_job(running.job_id, "alice", TTL_S)

    assert stored is not None and stored.result is not None
    assert Final.from_json(stored.result) == final
