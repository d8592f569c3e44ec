"""What only the PostgreSQL store does, against the throwaway server: the schema made and migrated
once however many replicas start together, failures named without the password, one store serving
event loop after event loop, units of work that a cancelled caller lets finish, and the cancel
channel between replicas. (Everything both backends share runs in the other store tests.)"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import asyncpg
import pytest
from postgres_cluster import PASSWORD_LOGIN_ROLE, PostgresCluster
from store_support import every_operation_fails

from colibri_router.store import CancelBroadcast, StoreError, without_password
from colibri_router.store.postgres import PostgresStore
from colibri_router.store.postgres import schema as postgres_schema
from colibri_router.store.postgres.cancels import MAX_KEY_BYTES
from colibri_router.store.postgres.connection import Connection, PostgresDatabase
from colibri_router.store.sqlite import SqliteStore

FreshDatabase = Callable[[], str]
_role_numbers = itertools.count(1)


async def _versions(url: str) -> list[int]:
    connection = await asyncpg.connect(url)
    try:
        return [row["version"] for row in await connection.fetch("SELECT version FROM schema_version ORDER BY 1")]
    finally:
        await connection.close()


async def _first_calls_at_once(url: str, stores: int) -> None:
    """``stores`` stores (each with its own pool, like replicas) make their first call together."""
    opened = [PostgresStore(url, thread_ttl_days=30) for _ in range(stores)]
    async with anyio.create_task_group() as group:
        for store in opened:
            group.start_soon(store.list_threads, "alice")
    for store in opened:
        await store.aclose()


# The schema


async def test_replicas_starting_together_create_the_schema_once(fresh_postgres_database: FreshDatabase) -> None:
    url = fresh_postgres_database()
    await _first_calls_at_once(url, stores=6)
    assert await _versions(url) == list(range(1, len(postgres_schema.MIGRATIONS) + 1))


async def test_a_new_migration_runs_once_while_replicas_start_together(
    fresh_postgres_database: FreshDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = fresh_postgres_database()
    await _first_calls_at_once(url, stores=1)  # the database at today's version
    upgrade = ("CREATE TABLE upgrade_runs (run integer)", "INSERT INTO upgrade_runs VALUES (1)")
    monkeypatch.setattr(postgres_schema, "MIGRATIONS", (*postgres_schema.MIGRATIONS, upgrade))

    await _first_calls_at_once(url, stores=6)
    assert await _versions(url) == list(range(1, len(postgres_schema.MIGRATIONS) + 1))
    connection = await asyncpg.connect(url)
    assert await connection.fetchval("SELECT COUNT(*) FROM upgrade_runs") == 1
    await connection.close()


async def test_a_database_from_a_newer_version_is_refused(fresh_postgres_database: FreshDatabase) -> None:
    url = fresh_postgres_database()
    await _first_calls_at_once(url, stores=1)
    newer = len(postgres_schema.MIGRATIONS) + 1
    connection = await asyncpg.connect(url)
    await connection.execute("INSERT INTO schema_version (version) VALUES ($1)", newer)
    await connection.close()

    store = PostgresStore(url, thread_ttl_days=30)
    with pytest.raises(StoreError, match="newer colibri-router") as raised:
        await store.list_threads("alice")
    assert raised.value.path == store.location
    assert (await _versions(url))[-1] == newer  # untouched
    await store.aclose()


# Failures


async def test_an_unreachable_server_is_a_store_error_without_the_password(postgres_cluster: PostgresCluster) -> None:
    url = postgres_cluster.url(password="s3cret-pw").replace(f":{postgres_cluster.port}/", ":1/")  # nobody there
    store = PostgresStore(url, thread_ttl_days=30)
    assert store.location == without_password(url)
    for error in await every_operation_fails(store):
        assert error.path == store.location
        assert isinstance(error.cause, ConnectionRefusedError)
        assert error.__cause__ is error.cause
        assert "s3cret" not in str(error)
        assert f"the colibri-router store at {store.location} failed: ConnectionRefusedError" in str(error)
    await store.aclose()


async def test_a_wrong_password_is_a_store_error_without_either_password(
    postgres_cluster: PostgresCluster, fresh_postgres_database: FreshDatabase
) -> None:
    role = f"replica_{next(_role_numbers)}"
    postgres_cluster.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'right-s3cret' IN ROLE {PASSWORD_LOGIN_ROLE}")
    as_superuser = fresh_postgres_database()
    postgres_cluster.execute(f"GRANT ALL ON SCHEMA {as_superuser.rpartition('%3D')[2]} TO {role}", database="colibri")

    def as_role(password: str) -> PostgresStore:
        url = as_superuser.replace("postgresql://postgres@", f"postgresql://{role}:{password}@")
        return PostgresStore(url, thread_ttl_days=30)

    wrong = as_role("wrong-s3cret")
    with pytest.raises(StoreError) as raised:
        await wrong.list_threads("alice")
    assert isinstance(raised.value.cause, asyncpg.InvalidPasswordError)
    assert "s3cret" not in str(raised.value)
    assert "s3cret" not in wrong.location

    right = as_role("right-s3cret")
    assert await right.list_threads("alice") == []
    await wrong.aclose()
    await right.aclose()


async def test_the_store_recovers_once_its_database_is_there(
    postgres_cluster: PostgresCluster, fresh_postgres_database: FreshDatabase
) -> None:
    url = fresh_postgres_database().replace("search_path%3Dtest_", "search_path%3Dlater_")  # no such schema yet
    store = PostgresStore(url, thread_ttl_days=30)
    for error in await every_operation_fails(store):
        assert isinstance(error.cause, asyncpg.PostgresError)
    postgres_cluster.execute(f"CREATE SCHEMA {url.rpartition('%3D')[2]}", database="colibri")
    assert await store.list_threads("alice") == []
    await store.aclose()
    postgres_cluster.execute(f"DROP SCHEMA {url.rpartition('%3D')[2]} CASCADE", database="colibri")


# Event loops and cancellation


def test_one_store_serves_event_loops_one_after_another(
    fresh_postgres_database: FreshDatabase, postgres_cluster: PostgresCluster
) -> None:
    """As a CLI does (one ``asyncio.run`` per command) and the tests do (a loop per test): each loop
    gets a pool of its own, closed when that loop ends, so no connection outlives its loop."""
    url = fresh_postgres_database() + "&application_name=loops"
    store = PostgresStore(url, thread_ttl_days=30)

    def no_connection_left() -> None:
        # A server process ends a moment after its client said goodbye: wait for that moment.
        deadline = time.monotonic() + 10
        query = "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'loops'"
        while postgres_cluster.fetchval(query) != 0:
            assert time.monotonic() < deadline, "a connection outlived its event loop"
            time.sleep(0.01)

    async def first() -> str:
        return await store.create_thread("alice", "kimi", "kimi-k2")

    thread_id = asyncio.run(first())
    no_connection_left()

    async def second() -> None:
        await store.append_turns(thread_id, "alice", [{"role": "user", "content": "hi"}], "kimi", "kimi-k2")

    anyio.run(second)
    no_connection_left()

    async def third() -> int:
        turns = (await store.load_thread(thread_id, "alice")).turns
        await store.aclose()
        return turns

    assert asyncio.run(third()) == 1
    no_connection_left()


async def test_a_cancelled_caller_lets_its_unit_of_work_finish(fresh_postgres_database: FreshDatabase) -> None:
    url = fresh_postgres_database()
    database = PostgresDatabase(url, without_password(url), max_connections=2, connect_timeout_s=10)
    await database.run(lambda connection: connection.execute("CREATE TABLE done (x integer)"))
    started = anyio.Event()

    async def slow_write(connection: Connection) -> None:
        async with connection.transaction():
            started.set()
            await connection.execute("SELECT pg_sleep(0.2)")
            await connection.execute("INSERT INTO done VALUES (1)")

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(database.run, slow_write)
            await started.wait()
            scope.cancel()
    rows = await database.run(lambda connection: connection.fetchval("SELECT COUNT(*) FROM done"))
    assert rows == 1
    await database.aclose()


# The cancel channel


async def _until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(10):  # a guard against hanging: a notification arrives in milliseconds
        while not condition():  # noqa: ASYNC110 (what is awaited is a callback from the database)
            await anyio.sleep(0.005)


def test_only_the_postgresql_store_broadcasts_cancels(tmp_path: Path) -> None:
    assert isinstance(PostgresStore("postgresql://colibri@db/colibri", thread_ttl_days=30), CancelBroadcast)
    assert not isinstance(SqliteStore(tmp_path / "colibri.db", thread_ttl_days=30), CancelBroadcast)


async def test_a_published_key_reaches_every_listener_its_own_process_included(
    fresh_postgres_database: FreshDatabase,
) -> None:
    url = fresh_postgres_database()
    replica_a, replica_b = PostgresStore(url, thread_ttl_days=30), PostgresStore(url, thread_ttl_days=30)
    heard_a: list[str] = []
    heard_b: list[str] = []
    async with replica_a.cancel_listener(heard_a.append), replica_b.cancel_listener(heard_b.append):
        await replica_b.publish_cancel("alice/request-1")
        await replica_a.publish_cancel("bob/7 ☃")
        await _until(lambda: len(heard_a) == len(heard_b) == 2)
    assert heard_a == heard_b == ["alice/request-1", "bob/7 ☃"]

    await replica_b.publish_cancel("after the listeners left")
    async with replica_a.cancel_listener(heard_a.append):
        await replica_b.publish_cancel("marker")
        await _until(lambda: heard_a[-1:] == ["marker"])
    assert heard_a == ["alice/request-1", "bob/7 ☃", "marker"]
    assert heard_b == ["alice/request-1", "bob/7 ☃"]
    await replica_a.aclose()
    await replica_b.aclose()


async def test_cancel_keys_must_fit_in_a_notification(fresh_postgres_database: FreshDatabase) -> None:
    store = PostgresStore(fresh_postgres_database(), thread_ttl_days=30)
    longest = "k" * MAX_KEY_BYTES
    heard: list[str] = []
    async with store.cancel_listener(heard.append):
        await store.publish_cancel(longest)
        await _until(lambda: heard == [longest])
    for too_long_or_unsendable in ("k" * (MAX_KEY_BYTES + 1), "é" * 4000, "nul\x00"):
        with pytest.raises(ValueError, match="cancel key"):
            await store.publish_cancel(too_long_or_unsendable)
    await store.aclose()


async def test_a_listener_that_loses_its_connection_listens_again(
    fresh_postgres_database: FreshDatabase, postgres_cluster: PostgresCluster
) -> None:
    store = PostgresStore(fresh_postgres_database() + "&application_name=lost_listener", thread_ttl_days=30)
    heard: list[str] = []
    async with store.cancel_listener(heard.append):
        listeners = (
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'lost_listener' AND query LIKE 'LISTEN %'"
        )
        postgres_cluster.execute(f"SELECT pg_terminate_backend(pid) FROM ({listeners}) AS listening")
        with anyio.fail_after(10):
            while "again" not in heard:
                await store.publish_cancel("again")  # missed while the listener is away
                await anyio.sleep(0.05)
    await store.aclose()


async def test_a_listener_on_an_unreachable_server_is_a_store_error(postgres_cluster: PostgresCluster) -> None:
    store = PostgresStore(postgres_cluster.url().replace(f":{postgres_cluster.port}/", ":1/"), thread_ttl_days=30)
    with pytest.raises(StoreError, match="ConnectionRefusedError"):
        async with store.cancel_listener(print):
            pytest.fail("listening without a server")
