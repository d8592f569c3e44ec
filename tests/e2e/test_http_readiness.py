"""``/readyz`` and a PostgreSQL restart under load, against the real ``serve --http`` process, the
official MCP client and the throwaway PostgreSQL server (stopped and started again mid-test)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx
import pytest
from fake_upstream import FakeUpstream
from http_harness import http_server, http_session
from mcp import ClientSession
from postgres_cluster import PostgresCluster

pytestmark = pytest.mark.e2e

DEADLINE_S = 8.0
CALL = {"prompt": "hello", "model": "kimi-k2-0905-preview", "max_tokens": 100, "timeout_s": DEADLINE_S}
CLIENTS = 4


async def _status_becomes(url: str, status: int, within_s: float) -> float:
    """Poll ``url`` until it answers ``status``; returns when (monotonic). Fails after ``within_s``."""
    async with httpx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(within_s):
            while (await client.get(url)).status_code != status:  # noqa: ASYNC110 - another process decides
                await anyio.sleep(0.1)
    return time.monotonic()


async def test_readyz_follows_the_database_and_calls_fail_fast_with_store_unavailable_meanwhile(
    fake_upstream: FakeUpstream,
    server_env: dict[str, str],
    tmp_path: Path,
    fresh_postgres_database: Callable[[], str],
    postgres_cluster: PostgresCluster,
) -> None:
    server_env["COLIBRI_DATABASE_URL"] = fresh_postgres_database()
    server_env["COLIBRI_BUDGET_DAILY_USD"] = "1000"  # every call reserves first, so every call needs the database
    log = tmp_path / "server.log"
    phase = "before"
    outcomes: list[tuple[str, str, float]] = []  # (phase when the call started, outcome kind, seconds taken)
    done = anyio.Event()

    async def load(session: ClientSession) -> None:
        while not done.is_set():
            started, when = time.monotonic(), phase
            with anyio.fail_after(DEADLINE_S + 5):  # a hang fails the test here
                result = await session.call_tool("router_call", CALL)
            kind = (result.structured_content or {})["error"]["kind"] if result.is_error else "ok"
            outcomes.append((when, kind, time.monotonic() - started))

    with http_server(server_env, log) as url:
        ready = url.replace("/mcp", "/readyz")
        await _status_becomes(ready, 200, 10)
        async with AsyncExitStack() as stack:
            sessions = [await stack.enter_async_context(http_session(url)) for _ in range(CLIENTS)]
            async with anyio.create_task_group() as group:
                for session in sessions:
                    group.start_soon(load, session)
                await anyio.sleep(1)
                phase = "stopping"  # calls in flight now may see the database go
                await anyio.to_thread.run_sync(postgres_cluster.stop_server)
                try:
                    phase = "outage"
                    await _status_becomes(ready, 503, 10)
                    await anyio.sleep(1.5)
                    phase = "restarting"
                finally:
                    await anyio.to_thread.run_sync(postgres_cluster.start_server)
                await _status_becomes(ready, 200, 20)
                phase = "after"
                await anyio.sleep(1.5)
                done.set()
        async with http_session(url) as fresh:  # the same process serves a new client, too
            assert not (await fresh.call_tool("router_call", CALL)).is_error
    by_phase: dict[str, list[str]] = {}
    for when, kind, _ in outcomes:
        by_phase.setdefault(when, []).append(kind)
    assert by_phase["before"] and set(by_phase["before"]) == {"ok"}
    assert by_phase["outage"] and set(by_phase["outage"]) == {"STORE_UNAVAILABLE"}, by_phase["outage"]
    assert by_phase["after"] and set(by_phase["after"]) == {"ok"}, by_phase["after"]
    assert max(seconds for _, _, seconds in outcomes) < DEADLINE_S
    assert "Traceback" not in log.read_text()
