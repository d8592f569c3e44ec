"""Pool keys set aside, shared by two replicas through one PostgreSQL database (docs/keys.md): each
replica is this process's key state started afresh (as a new process starts) over a store of its own,
calling the real router against the fake upstream answering per key."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import asyncpg
import pytest
from fake_upstream import FakeUpstream, error, request_key

from colibri_router.engine.keys import fingerprint, reset_pools, share_through
from colibri_router.engine.shared_keys import SharedSetAsides
from colibri_router.router import route
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput
from colibri_router.store import StoreError
from colibri_router.store.postgres import PostgresStore

K1, K2 = "shared-pool-key-one-3b8e", "shared-pool-key-two-9d4a"


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    reset_pools()
    yield
    share_through(None)
    reset_pools()


@pytest.fixture
def gemini(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    monkeypatch.setenv("GEMINI_API_KEY", f"{K1},{K2}")
    monkeypatch.setenv("GEMINI_BASE_URL", fake_upstream.base_url("gemini"))
    return fake_upstream


def replica(sharing: SharedSetAsides | None) -> None:
    """This process becomes a replica that just started: no key state of its own."""
    reset_pools()
    share_through(sharing)


async def call() -> Any:
    return (
        await route(call_from(RouterCallInput.model_validate({"prompt": "hi", "model": "gemini-3.5-flash"})))
    ).result


def keys_sent(fake: FakeUpstream) -> list[str]:
    return [request_key(r) for r in fake.gemini.requests]


async def test_a_key_one_replica_set_aside_is_skipped_by_the_other(
    gemini: FakeUpstream, fresh_postgres_database: Callable[[], str]
) -> None:
    url = fresh_postgres_database()
    first, second = PostgresStore(url, thread_ttl_days=30), PostgresStore(url, thread_ttl_days=30)
    gemini.gemini.enqueue_for_key(K1, error(429, message="slow down", headers={"Retry-After": "30"}))
    try:
        a = SharedSetAsides(first)
        replica(a)
        await call()
        await a.flush()
        replica(SharedSetAsides(second))
        answered = await call()
    finally:
        await first.aclose()
        await second.aclose()

    assert keys_sent(gemini) == [K1, K2, K2]  # the second replica never sent k1
    assert answered.attempts[0].key == fingerprint("gemini", K2)
    assert not any(w.startswith("key ") for w in answered.warnings)


async def test_without_sharing_each_replica_pays_one_refusal_per_key_set_aside(gemini: FakeUpstream) -> None:
    # What per-replica state costs, measured: the same key refused once more by each replica.
    for _ in range(2):
        gemini.gemini.enqueue_for_key(K1, error(429, message="slow down", headers={"Retry-After": "30"}))
    replica(None)
    await call()
    replica(None)
    await call()

    assert keys_sent(gemini) == [K1, K2, K1, K2]


async def test_a_rejected_key_is_shared_until_restart_by_fingerprint_only(
    gemini: FakeUpstream, fresh_postgres_database: Callable[[], str]
) -> None:
    url = fresh_postgres_database()
    store = PostgresStore(url, thread_ttl_days=30)
    gemini.gemini.enqueue_for_key(K1, error(401, message="API key not valid"))
    try:
        shared = SharedSetAsides(store)
        replica(shared)
        await call()
        await shared.flush()
        rows = await store.key_set_asides(0.0)
    finally:
        await store.aclose()
    connection = await asyncpg.connect(url)
    try:
        table = json.dumps([list(r.values()) for r in await connection.fetch("SELECT * FROM key_set_asides")])
    finally:
        await connection.close()

    assert [(provider, fp, reason, until) for provider, fp, reason, until, _ in rows] == [
        ("gemini", fingerprint("gemini", K1), "invalid", math.inf)
    ]
    assert K1 not in table and K2 not in table


class Unreachable:
    """A database that fails every operation."""

    async def key_set_asides(self, now: float) -> list[tuple[str, str, str, float, int]]:
        raise StoreError("postgresql://db/colibri", OSError("connection refused"), backend="postgresql")

    async def set_key_aside(self, row: tuple[str, str, str, float, int], now: float) -> None:
        raise StoreError("postgresql://db/colibri", OSError("connection refused"), backend="postgresql")

    async def clear_key(self, provider: str, fingerprint: str) -> None:
        raise StoreError("postgresql://db/colibri", OSError("connection refused"), backend="postgresql")


async def test_a_database_that_fails_costs_the_sharing_never_a_call(gemini: FakeUpstream) -> None:
    gemini.gemini.enqueue_for_key(K1, error(429, message="slow down", headers={"Retry-After": "30"}))
    shared = SharedSetAsides(Unreachable())
    replica(shared)

    first = await call()
    await shared.flush()
    second = await call()

    assert (first.content, second.content) == ("echo: hi", "echo: hi")
    assert keys_sent(gemini) == [K1, K2, K2]  # the replica still knows what it set aside itself
