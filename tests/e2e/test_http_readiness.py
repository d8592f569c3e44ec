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
    outcomes: list[tuple[float, float, str]] = []  # (started, ended, outcome kind) on the monotonic clock
    done = anyio.Event()

    async def load(session: ClientSession) -> None:
        while not done.is_set():
            started = time.monotonic()
            with anyio.fail_after(DEADLINE_S + 5):  # a hang fails the test here
                result = await session.call_tool("router_call", CALL)
            kind = (result.structured_content or {})["error"]["kind"] if result.is_error else "ok"
            outcomes.append((started, time.monotonic(), kind))

    with http_server(server_env, log) as url:
        ready = url.replace("/mcp", "/readyz")
        await _status_becomes(ready, 200, 10)
        async with AsyncExitStack() as stack:
            sessions = [await stack.enter_async_context(http_session(url)) for _ in range(CLIENTS)]
            async with anyio.create_task_group() as group:
                for session in sessions:
                    group.start_soon(load, session)
                await anyio.sleep(1.5)
                stopping = time.monotonic()
                await anyio.to_thread.run_sync(postgres_cluster.stop_server)
                try:
                    stopped = time.monotonic()
                    await _status_becomes(ready, 503, 10)
                    await anyio.sleep(1.5)
                finally:
                    restarting = time.monotonic()
                    await anyio.to_thread.run_sync(postgres_cluster.start_server)
                back = await _status_becomes(ready, 200, 20)
                await anyio.sleep(1.5)
                done.set()
        async with http_session(url) as fresh:  # the same process serves a new client, too
            assert not (await fresh.call_tool("router_call", CALL)).is_error
    before = [kind for _, ended, kind in outcomes if ended < stopping]
    during = [kind for started, ended, kind in outcomes if started > stopped and ended < restarting]
    after = [kind for started, _, kind in outcomes if started > back]
    assert before and set(before) == {"ok"}, before
    assert during and set(during) == {"STORE_UNAVAILABLE"}, during
    assert after and set(after) == {"ok"}, after
    assert max(ended - started for started, ended, _ in outcomes) < DEADLINE_S
    assert "Traceback" not in log.read_text()
