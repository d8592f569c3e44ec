"""Jobs from the terminal (docs/jobs.md): ``call --background`` runs detached and ``colibri-router jobs``
reads the same store as the MCP server, cancels in the process that runs the job, and a job whose
process died reads as SERVER_STOPPED."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_upstream import FakeUpstream, kimi_text
from harness import SERVER_COMMAND, every_provider_env, router_session

pytestmark = pytest.mark.e2e

KIMI = "kimi-k2.6"


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SERVER_COMMAND, *args], check=False, env=env, capture_output=True, text=True, timeout=90)


def _json(completed: subprocess.CompletedProcess[str]) -> Any:
    assert completed.stdout, completed.stderr
    return json.loads(completed.stdout)


def _owner_pid(job_id: str) -> int:
    database = Path(os.environ["COLIBRI_STATE_DIR"]) / "colibri.db"
    with sqlite3.connect(database) as connection:
        (owner,) = connection.execute("SELECT owner FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
    return int(owner.split(":")[1])


def test_call_background_prints_a_handle_and_jobs_waits_for_the_result(fake_upstream: FakeUpstream) -> None:
    env = every_provider_env(fake_upstream)
    fake_upstream.kimi.enqueue(kimi_text("detached answer", model=KIMI, delay_s=1.5))
    started = cli(env, "call", "a long question", "--model", KIMI, "--background")
    assert started.returncode == 0, started.stdout + started.stderr
    handle = _json(started)
    assert handle["status"] == "running"
    assert "router_job" in handle["next"]

    waited = cli(env, "jobs", handle["job_id"], "--wait", "60")
    listed = cli(env, "jobs")

    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert _json(waited)["content"] == "detached answer"
    assert _json(waited)["model"] == KIMI
    [job] = _json(listed)["jobs"]
    assert (job["job_id"], job["tool"], job["status"]) == (handle["job_id"], "router_call", "succeeded")


async def test_a_job_started_by_the_cli_is_read_by_the_mcp_server(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    env = every_provider_env(fake_upstream)
    fake_upstream.kimi.enqueue(kimi_text("for the host", model=KIMI, delay_s=1.0))
    handle = _json(await anyio.to_thread.run_sync(lambda: cli(env, "call", "q", "--model", KIMI, "--background")))
    async with router_session(env, server_log) as session:
        result = await session.call_tool("router_job", {"job_id": handle["job_id"], "wait_s": 30})
    assert not result.is_error
    assert (result.structured_content or {})["content"] == "for the host"


async def test_jobs_cancel_reaches_the_server_that_runs_the_job(fake_upstream: FakeUpstream, server_log: Path) -> None:
    env = every_provider_env(fake_upstream)
    fake_upstream.kimi.enqueue(kimi_text("never", model=KIMI, hold_open_s=30))
    async with router_session(env, server_log) as session:
        handle = await session.call_tool("router_call", {"prompt": "q", "model": KIMI, "background": True})
        job_id = (handle.structured_content or {})["job_id"]
        cancelled = await anyio.to_thread.run_sync(lambda: cli(env, "jobs", job_id, "--cancel", "--wait", "20"))
        disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)
        seen = await session.call_tool("router_job", {"job_id": job_id, "wait_s": 0})

    assert cancelled.returncode == 1, cancelled.stdout + cancelled.stderr
    assert _json(cancelled)["error"]["code"] == "JOB_CANCELLED"
    assert disconnect is not None  # the server closed the upstream request
    assert seen.is_error
    assert (seen.structured_content or {})["error"]["code"] == "JOB_CANCELLED"


def test_a_job_whose_process_died_reads_as_server_stopped(fake_upstream: FakeUpstream) -> None:
    env = every_provider_env(fake_upstream)
    fake_upstream.kimi.enqueue(kimi_text("never", model=KIMI, hold_open_s=60))
    handle = _json(cli(env, "call", "q", "--model", KIMI, "--background"))
    pid = _owner_pid(handle["job_id"])
    os.kill(pid, signal.SIGKILL)
    for _ in range(100):  # the detached process is reaped by init once it is gone
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)

    read = cli(env, "jobs", handle["job_id"])
    listed = cli(env, "jobs")

    assert read.returncode == 1, read.stdout + read.stderr
    error = _json(read)["error"]
    assert (error["code"], error["kind"], error["retryable"]) == ("SERVER_STOPPED", "SERVER_STOPPED", True)
    assert [job["status"] for job in _json(listed)["jobs"]] == ["failed"]


def test_jobs_cancel_stops_a_detached_job(fake_upstream: FakeUpstream) -> None:
    env = every_provider_env(fake_upstream)
    fake_upstream.kimi.enqueue(kimi_text("never", model=KIMI, hold_open_s=60))
    handle = _json(cli(env, "call", "q", "--model", KIMI, "--background"))

    cancelled = cli(env, "jobs", handle["job_id"], "--cancel", "--wait", "20")
    disconnect = fake_upstream.wait_disconnect(5.0)

    assert cancelled.returncode == 1, cancelled.stdout + cancelled.stderr
    assert _json(cancelled)["error"]["code"] == "JOB_CANCELLED"
    assert disconnect is not None  # the detached process closed its upstream request
