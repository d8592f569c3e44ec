"""Opening a SQLite database: created on first use only, WAL, versioned schema migrated forward, and
``open_store`` obeying the environment at call time."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest
from store_support import START, FakeClock, ledger_row

from colibri_router.callers import local_principal
from colibri_router.errors import ConfigError
from colibri_router.store import BudgetLimits, StoreError, default_state_dir, open_store
from colibri_router.store.sqlite import SqliteStore
from colibri_router.store.sqlite.schema import CURRENT_VERSION

# The schema exactly as version 1 created it; a file made by that version must keep working.
VERSION_1 = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1, 0);
CREATE TABLE threads (
    thread_id TEXT PRIMARY KEY, principal TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '', turns INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL
);
CREATE INDEX threads_by_principal ON threads (principal, updated_at_ms);
CREATE INDEX threads_by_age ON threads (updated_at_ms);
CREATE TABLE thread_messages (
    thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    position INTEGER NOT NULL, message TEXT NOT NULL, PRIMARY KEY (thread_id, position)
) WITHOUT ROWID;
CREATE TABLE ledger (
    id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, principal TEXT NOT NULL, thread_id TEXT,
    provider TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
    cost_micro_usd INTEGER, latency_ms INTEGER NOT NULL, outcome TEXT NOT NULL, kind TEXT
);
CREATE INDEX ledger_by_time ON ledger (at_ms, cost_micro_usd);
CREATE INDEX ledger_by_principal ON ledger (principal, at_ms, cost_micro_usd);
"""

START_MS = int(START.timestamp() * 1000)


def _versions(path: Path) -> list[int]:
    with sqlite3.connect(path) as connection:
        return [version for (version,) in connection.execute("SELECT version FROM schema_version ORDER BY version")]


async def test_nothing_is_created_before_the_first_call(tmp_path: Path) -> None:
    state_dir = tmp_path / "state" / "colibri-router"
    store = open_store(state_dir)
    assert store is not None
    assert not state_dir.exists()

    await store.list_threads("alice")
    assert (state_dir / "colibri.db").is_file()
    assert store.location == str(state_dir / "colibri.db")
    await store.aclose()


async def test_a_new_file_is_in_wal_mode_at_the_current_version(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "colibri.db", thread_ttl_days=30)
    await store.usage_report(None)
    await store.aclose()
    with sqlite3.connect(tmp_path / "colibri.db") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert _versions(tmp_path / "colibri.db") == list(range(1, CURRENT_VERSION + 1))


async def test_a_version_1_file_is_migrated_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "colibri.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(VERSION_1)
        connection.execute(
            "INSERT INTO threads VALUES ('th_old', 'alice', 'kimi', 'kimi-k2', 'Hello', 1, ?, ?)", (START_MS, START_MS)
        )
        connection.execute(
            "INSERT INTO thread_messages VALUES ('th_old', 0, ?)", ('{"role":"user","content":"Hello"}',)
        )
        connection.execute(
            "INSERT INTO ledger VALUES"
            " (NULL, ?, 'alice', 'th_old', 'kimi', 'kimi-k2', 10, 5, 0, 0, 0, ?, 80, 'ok', NULL)",
            (START_MS, 1234),
        )
    connection.close()

    store = SqliteStore(path, thread_ttl_days=30, clock=FakeClock())
    thread = await store.load_thread("th_old", "alice")
    assert thread.messages == [{"role": "user", "content": "Hello"}]
    assert (await store.usage_report("alice")).total.cost_micro_usd == 1234
    assert _versions(path) == list(range(1, CURRENT_VERSION + 1))

    # What version 2 added works on the migrated file: leases and reservations.
    async with store.claim_thread("th_old", "alice", wait_s=0) as lease:
        await store.append_turns(
            "th_old", "alice", [{"role": "assistant", "content": "Hi"}], "kimi", "kimi-k2", lease=lease
        )
    reservation = await store.reserve_budget("alice", 10, BudgetLimits(daily_micro_usd=10_000))
    await store.settle(reservation, ledger_row(START, cost_micro_usd=10))
    assert (await store.load_thread("th_old", "alice")).turns == 2
    await store.aclose()


async def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "colibri.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL)")
        connection.execute("INSERT INTO schema_version VALUES (?, 0)", (CURRENT_VERSION + 1,))
    connection.close()
    store = SqliteStore(path, thread_ttl_days=30)
    with pytest.raises(StoreError, match="newer colibri-router") as raised:
        await store.list_threads("alice")
    assert raised.value.path == str(path)
    assert _versions(path) == [CURRENT_VERSION + 1]  # untouched


def test_open_store_is_off_when_the_environment_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLIBRI_STORE", "OFF")
    assert open_store(tmp_path) is None
    for on in ("on", "", " On "):
        monkeypatch.setenv("COLIBRI_STORE", on)
        assert isinstance(open_store(tmp_path), SqliteStore)
    monkeypatch.setenv("COLIBRI_STORE", "sometimes")
    with pytest.raises(ConfigError, match="COLIBRI_STORE"):
        open_store(tmp_path)


def test_the_state_directory_is_read_from_the_environment_at_call_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("COLIBRI_STATE_DIR")  # the conftest points it at a temp dir
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_dir() == Path(platformdirs.user_state_dir("colibri-router"))
    assert default_state_dir() == tmp_path / "xdg" / "colibri-router"
    monkeypatch.setenv("COLIBRI_STATE_DIR", str(tmp_path / "here"))
    assert default_state_dir() == tmp_path / "here"
    store = open_store()
    assert store is not None
    assert store.location == str(tmp_path / "here" / "colibri.db")


def test_importing_the_store_opens_nothing_and_loads_no_database_driver() -> None:
    probe = "import sys, colibri_router.store; print('sqlite3' in sys.modules, 'asyncpg' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False False"


def test_the_local_principal_is_the_user_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGNAME", "ada")
    assert local_principal() == "ada"
