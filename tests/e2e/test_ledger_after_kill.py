"""Grouped ledger commits keep the rule they replace: a call is answered only once its row is
committed. The real ``serve --http`` is SIGKILLed under load, then the rows are counted: every call
whose answer arrived has its row (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import asyncpg
import httpx
import pytest
from fake_upstream import KIMI_MODEL, FakeUpstream
from harness import SERVER_COMMAND
from http_harness import MCP_HEADERS, free_port, tools_call

pytestmark = pytest.mark.e2e

CLIENTS = 8


def _answered(response: httpx.Response) -> bool:
    """Whether an answer (one JSON body, or an SSE stream) holds a successful tools/call result."""
    if response.headers["content-type"] == "application/json":
        messages = [response.json()]
    else:
        messages = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    for message in messages:
        if message.get("id") is not None and "result" in message:
            return not message["result"].get("isError", False)
    return False


async def _ok_rows(backend: str, state_dir: Path, url: str | None) -> int:
    if backend == "sqlite":
        with sqlite3.connect(state_dir / "colibri.db") as database:
            return int(database.execute("SELECT COUNT(*) FROM ledger WHERE outcome = 'ok'").fetchone()[0])
    assert url is not None
    connection = await asyncpg.connect(url)
    try:
        return int(await connection.fetchval("SELECT COUNT(*) FROM ledger WHERE outcome = 'ok'"))
    finally:
        await connection.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_every_answered_call_has_its_row_after_a_sigkill(
    fake_upstream: FakeUpstream,
    server_env: dict[str, str],
    tmp_path: Path,
    backend: str,
    request: pytest.FixtureRequest,
) -> None:
    url = None
    if backend == "postgresql":
        fresh: Callable[[], str] = request.getfixturevalue("fresh_postgres_database")
        url = server_env["COLIBRI_DATABASE_URL"] = fresh()
    state_dir = Path(server_env["COLIBRI_STATE_DIR"])
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/mcp"
    with (tmp_path / "server.log").open("a") as log:
        process = subprocess.Popen(  # noqa: ASYNC220 - starting it takes no time worth a thread
            [SERVER_COMMAND, "serve", "--http", "--port", str(port)], env=server_env, stdout=log, stderr=log
        )
    answered = 0
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            with anyio.fail_after(30):
                while True:
                    try:
                        if (await client.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                            break
                    except httpx.TransportError:
                        await anyio.sleep(0.05)

            async def calls(first_id: int) -> None:
                nonlocal answered
                for request_id in range(first_id, first_id + 100_000):
                    call = tools_call(request_id, {"prompt": "hi", "model": KIMI_MODEL})
                    try:
                        response = await client.post(endpoint, json=call, headers=MCP_HEADERS)
                    except httpx.TransportError:
                        return  # the server is gone
                    if response.status_code == 200 and _answered(response):
                        answered += 1

            async with anyio.create_task_group() as group:
                for index in range(CLIENTS):
                    group.start_soon(calls, index * 100_000)
                await anyio.sleep(2.0)
                process.send_signal(signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert answered > 0
    assert await _ok_rows(backend, state_dir, url) >= answered
