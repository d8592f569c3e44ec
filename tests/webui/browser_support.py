"""What the ``/ui`` browser tests share: Debian's Chromium (found, or the tests skip saying why; under
CI they fail instead), axe-core from the npm registry (pinned in ``tests/webui/axe``, installed once
into the user's cache directory like the agent CLIs, never committed), a ledger written through the
real SQLite store, and the real ``colibri-router serve --http`` process reading it. The ``browser``
fixture (one Chromium per test module) reaches every test here through ``tests/webui/conftest.py``."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from filelock import FileLock
from platformdirs import user_cache_path
from playwright.sync_api import Browser, sync_playwright

from colibri_router.store import JobRecord, LedgerAttempt, LedgerRow
from colibri_router.store.jobs import JobStatus
from colibri_router.store.sqlite.store import SqliteStore
from colibri_router.store.utc_windows import day_start
from colibri_router.tokens import add_token

AXE_PACKAGE = Path(__file__).parent / "axe"
SERVER_COMMAND = str(Path(sys.executable).with_name("colibri-router"))
# Debian's and Ubuntu's names, then Google Chrome's (GitHub's Ubuntu runners have it).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome")
JOB_TTL_S = 86_400.0  # COLIBRI_JOB_TTL_S's default, which the server reads
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def chromium_path() -> str:
    """The system's Chromium or Chrome (``UI_TEST_CHROMIUM`` names another): Playwright drives it,
    and downloads no browser of its own."""
    named = os.environ.get("UI_TEST_CHROMIUM")
    found = named or next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)
    if not found:
        _unavailable("no Chromium found (Debian: apt-get install chromium): the /ui browser tests need one")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """The system's Chromium, headless, for one test module."""
    executable = chromium_path()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


def axe_source() -> str:
    """axe-core's script, installed from the npm registry on first use (``npm ci`` of the lock in
    ``tests/webui/axe``) into ``$XDG_CACHE_HOME/colibri-router-tests/axe/<lock hash>``."""
    if shutil.which("npm") is None:
        _unavailable("npm is not installed: the accessibility checks install axe-core with it")
    files = [AXE_PACKAGE / "package.json", AXE_PACKAGE / "package-lock.json"]
    lock = hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()[:16]
    root = os.environ.get("COLIBRI_TEST_NPM_DIR")
    target = (Path(root) if root else user_cache_path("colibri-router-tests")) / "axe" / lock
    script = target / "node_modules" / "axe-core" / "axe.min.js"
    target.mkdir(parents=True, exist_ok=True)
    with FileLock(target.parent / f"{target.name}.lock"):  # parallel test workers install it once
        if not script.exists():
            for path in files:
                shutil.copyfile(path, target / path.name)
            done = subprocess.run(
                ["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--prefix", str(target)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if done.returncode != 0 or not script.exists():
                _unavailable(f"npm ci of tests/webui/axe into {target} failed:\n{done.stderr[-2000:]}")
    return script.read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Ledger:
    """The rows written, and the days they fall on (UTC, ``YYYY-MM-DD``)."""

    rows: list[LedgerRow]
    yesterday: str
    today: str
    jobs: list[tuple[JobRecord, JobStatus, str | None]]  # each job, how it ended (running: None) and its result


def ledger_rows(now: datetime) -> Ledger:
    """Calls by alice and bob: yesterday's, today's and three days ago; one failed, one unpriced."""
    today = day_start(now)
    yesterday = today - timedelta(hours=12)

    def row(at: datetime, principal: str, model: str, cost: int | None, **fields: object) -> LedgerRow:
        values: dict[str, object] = {"thread_id": None, "input_tokens": 1_000, "output_tokens": 200, "latency_ms": 800}
        return LedgerRow(
            at=at,
            principal=principal,
            provider=model.split("-", maxsplit=1)[0],
            model=model,
            cost_micro_usd=cost,
            **(values | fields),  # type: ignore[arg-type]
        )

    rows = [
        row(today - timedelta(days=3), "bob", "kimi-k2", 10_000),
        row(yesterday, "alice", "kimi-k2", 120_000),
        row(yesterday + timedelta(minutes=5), "alice", "gpt-5", 30_000),
        row(yesterday + timedelta(minutes=9), "bob", "gpt-5", 50_000),
        row(today, "bob", "kimi-k2", None, outcome="TIMEOUT", kind="TIMEOUT", input_tokens=0, output_tokens=0),
        row(
            today + timedelta(seconds=1),
            "alice",
            "claude-sonnet-4-5",
            7_000,
            thread_id="th_webuiThreadId0000001",
            cached_tokens=44,
            attempts=(
                LedgerAttempt("kimi", "kimi-k2", "KIMI_RATE_LIMITED", "RATE_LIMITED", 321),
                LedgerAttempt("claude", "claude-sonnet-4-5", "ok", None, 1_234),
            ),
            warning_count=1,
            reasoning_tokens=33,
            latency_ms=1_234,
        ),
    ]
    return Ledger(rows, yesterday.strftime("%Y-%m-%d"), today.strftime("%Y-%m-%d"), team_jobs(now))


# A job's answer: the jobs page must never show it.
JOB_ANSWER = "The migration plan, step one: uiJobSecretAnswer"


def team_jobs(now: datetime) -> list[tuple[JobRecord, JobStatus, str | None]]:
    """Bob's review whose process is gone and call that timed out, alice's finished call and running
    ask_many (oldest first)."""

    def job(minutes: int, job_id: str, principal: str, tool: str, progress: str | None, cost: int) -> JobRecord:
        at = now - timedelta(minutes=minutes)
        # Run by this test process, alive while the server reads it; its claim renewed a day ahead, so
        # no lease runs out however long the tests take.
        alive = f"{socket.gethostname()}:{os.getpid()}:ui"
        return JobRecord(job_id, principal, tool, "running", progress, cost, at, now + timedelta(days=1), alive)

    # A job whose process (on another machine) stopped renewing it two hours ago: the page ends it as stopped.
    crashed = job(120, "job_uiBobCrashed000000001", "bob", "router_run", "step 3: running the tests", 2_000)
    crashed = JobRecord(
        **{**{name: getattr(crashed, name) for name in crashed.__slots__}, "owner": "elsewhere:1:ui"}
        | {"updated_at": crashed.started_at}
    )

    answered = json.dumps({"structured": {"content": JOB_ANSWER}, "text": JOB_ANSWER, "is_error": False})
    timed_out = json.dumps(
        {"structured": {"error": {"code": "KIMI_TIMEOUT", "message": JOB_ANSWER}}, "text": "", "is_error": True}
    )
    done = job(30, "job_uiAliceDone0000000001", "alice", "router_call", "kimi-k2 answering", 41_000)
    running = job(4, "job_uiAliceRunning0000001", "alice", "router_ask_many", "2/3 gpt-5 answered in 84.2 s", 96_000)
    return [
        (crashed, "running", None),
        (job(50, "job_uiBobTimedOut000000001", "bob", "router_call", None, 0), "failed", timed_out),
        (done, "succeeded", answered),
        (running, "running", None),
    ]


def write_ledger(path: Path, rows: list[LedgerRow], jobs: list[tuple[JobRecord, JobStatus, str | None]]) -> None:
    """The rows and jobs, through the store the server uses, into a real SQLite file."""

    async def write() -> None:
        store = SqliteStore(path, thread_ttl_days=30)
        for each in rows:
            await store.record_call(each)
        for record, status, result in jobs:
            await store.create_job(record, JOB_TTL_S)
            if result is not None:
                await store.finish_job(record.job_id, record.owner, status, result, None)
        await store.aclose()

    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API may hold this thread's event loop
        thread.submit(asyncio.run, write()).result()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# The providers' keys the server holds (never sent anywhere: no test makes a call): a pool of two, and one.
PROVIDER_KEYS = {
    "COLIBRI_KIMI_API_KEY": "sk-uiKimiPoolKeyOne00000000000000,sk-uiKimiPoolKeyTwo00000000000000",
    "OPENAI_API_KEY": "sk-proj-uiOpenaiSingleKey000000000000000",
}


@dataclass(frozen=True, slots=True)
class Team:
    """A running server: its base URL, each member's token, the ledger it reads."""

    base: str
    tokens: dict[str, str]
    ledger: Ledger


@contextmanager
def team_server(directory: Path, *, workers: int = 1) -> Iterator[Team]:
    """``serve --http`` with a tokens file (ops, an admin; alice and bob, members), a budget per
    member, the keys of :data:`PROVIDER_KEYS`, and the ledger of :func:`ledger_rows` in its SQLite database."""
    ledger = ledger_rows(datetime.now(UTC))
    write_ledger(directory / "ledger.db", ledger.rows, ledger.jobs)
    tokens = {name: add_token(directory / "tokens", name) for name in ("ops", "alice", "bob")}
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(directory),
        "XDG_CONFIG_HOME": str(directory / "config"),
        "COLIBRI_STATE_DIR": str(directory / "state"),
        "COLIBRI_DATABASE_URL": f"sqlite:///{directory / 'ledger.db'}",
        "COLIBRI_HTTP_TOKENS_FILE": str(directory / "tokens"),
        "COLIBRI_HTTP_ADMINS": "ops",
        "COLIBRI_BUDGET_DAILY_USD_PER_USER": "0.5",
        **PROVIDER_KEYS,
    }
    port = free_port()
    log = directory / "server.log"
    with log.open("a") as output:
        process = subprocess.Popen(
            [SERVER_COMMAND, "serve", "--http", "--port", str(port), "--workers", str(workers)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, process, log, workers)
        yield Team(base, tokens, ledger)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(base: str, process: subprocess.Popen[bytes], log: Path, workers: int) -> None:
    """Until /healthz answers and every worker has started (a busy machine may take a while)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            started = log.read_text().count("Application startup complete")
            if started >= workers and httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the server never answered {base}/healthz:\n{log.read_text()}")
