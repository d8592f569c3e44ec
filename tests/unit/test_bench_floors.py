"""Benchmark 9's PostgreSQL row, the parts that need no network and start nothing: where its database comes
from (or why there is none), the database's CPU in a window, the row's wording and target, the ledger's cost
on both ledger rows, and the ``--no-postgres`` flag; and ``start_cluster``'s own exception, which the
benchmark turns into a skipped row and the tests' fixture into a skip (or, in CI, a failure)."""

from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import NoReturn

import pytest

if not sys.platform.startswith("linux"):  # the benchmarks read /proc (and the cluster's code needs pwd)
    pytest.skip("benchmark 9 runs on Linux", allow_module_level=True)

from benchmarks import floors, postgres_db

# The tests' cluster code, reached the way the benchmark reaches it. No test here starts a server, and none
# uses its fixtures (tests/test_release.py keeps the tests that do off CI's macOS and Windows jobs).
clusters = postgres_db._cluster_module()

URL = "http://127.0.0.1:4000"
NOT_INSTALLED = "PostgreSQL is not installed"


def _server(
    name: str, cpu_ms: float, *, p50_s: float = 0.005, database: tuple[int, float] | None = None
) -> floors._Server:
    """1000 calls in 1 s, ``cpu_ms`` of server CPU per call; ``database``: a postmaster pid, its CPU ms per call."""
    server = floors._Server(name, URL, 1, True, [p50_s], 1000, 1.0, cpu_ms)
    if database is not None:
        server.database_pid, server.database_cpu_s = database[0], database[1]
    return server


def _servers(postgres_cpu_ms: float | None, *, database: tuple[int, float] | None = (7, 0.18)) -> list[floors._Server]:
    servers = [
        _server("bare SDK server, trivial tool", 1.4, p50_s=0.002),
        _server("bare SDK relay (the floor)", 2.0, p50_s=0.0045),
        _server(floors.SQLITE_ROW, 3.0),
        _server(floors.STORE_OFF_ROW, 2.5),
    ]
    if postgres_cpu_ms is not None:
        servers.append(_server(floors.POSTGRES_ROW, postgres_cpu_ms, database=database))
    return servers


def _row(report: floors.Report, name: str) -> floors.Row:
    return _find(report.rows, name)


def _find(rows: list[floors.Row], name: str) -> floors.Row:
    (row,) = [row for row in rows if row.benchmark == f"9 {name}"]
    return row


def test_the_postgres_rows_target_is_the_servers_ledger_cost_with_the_databases_cpu_beside_it() -> None:
    # Server CPU 2.60 ms against 2.50 with the store off: +0.10 ms, under 0.2 ms. The database's 0.18 ms would
    # put it over if it counted: it is shown, not judged.
    report = floors._report(_servers(2.6), 1, 1, False, None)
    row = _row(report, floors.POSTGRES_ROW)
    assert "server CPU 2.60 ms per call (+0.18 ms in PostgreSQL)" in row.measured
    assert "ledger cost +0.10 ms CPU per call (row - store-off row)" in row.measured
    assert row.measured.endswith("; throwaway cluster, fsync and synchronous_commit off")
    assert (row.target, row.met) == ("ledger ≤ 0.2 ms per call", True)
    assert "the database's own CPU per call" in report.notes[0]

    over = _row(floors._report(_servers(2.8), 1, 1, False, None), floors.POSTGRES_ROW)
    assert "ledger cost +0.30 ms CPU per call" in over.measured and over.met is False


def test_the_sqlite_row_shows_its_ledger_cost_and_keeps_its_targets() -> None:
    rows = floors._report(_servers(2.6), 1, 1, False, None).rows
    sqlite = _find(rows, floors.SQLITE_ROW)
    assert "; ledger cost +0.50 ms CPU per call (row - store-off row)" in sqlite.measured
    assert sqlite.target == "≥ 0.9x relay calls/s; CPU ≤ relay + 0.4 ms; p50 ≤ relay + 0.8 ms"
    # Its calls/s equal the relay's and its p50 is within 0.8 ms of the relay's, but its CPU is 1.0 ms above.
    assert sqlite.met is False
    faster = _servers(2.6)
    faster[2].cpu_s = 2.3
    assert _row(floors._report(faster, 1, 1, False, None), floors.SQLITE_ROW).met is True
    for name in ("bare SDK server, trivial tool", "bare SDK relay (the floor)", floors.STORE_OFF_ROW):
        assert "ledger cost" not in _find(rows, name).measured


def test_the_sqlite_row_says_how_far_it_is_from_the_json_answer_floor_which_is_information() -> None:
    servers = _servers(None)
    servers.insert(2, _server(floors.JSON_FLOOR_ROW, 1.8, p50_s=0.004))
    servers[3].seconds = 1000 / 900  # the SQLite row: 900 calls/s against the JSON floor's 1000
    rows = floors._report(servers, 1, 1, False, None).rows
    sqlite, json_floor = _find(rows, floors.SQLITE_ROW), _find(rows, floors.JSON_FLOOR_ROW)
    assert "; against the JSON-answer relay: 0.90x its calls/s, CPU +1.20 ms, p50 +1.00 ms" in sqlite.measured
    assert (json_floor.target, json_floor.met) == ("— (information)", None)
    without = floors._report(_servers(None), 1, 1, False, None).rows
    assert "JSON-answer" not in _find(without, floors.SQLITE_ROW).measured


def test_a_database_from_the_environment_is_used_but_its_cpu_is_not_measured() -> None:
    row = _row(floors._report(_servers(2.6, database=None), 1, 1, False, None), floors.POSTGRES_ROW)
    assert "in PostgreSQL)" not in row.measured and "fsync" not in row.measured
    assert row.measured.endswith("; PostgreSQL's CPU not measured (the database of COLIBRI_BENCH_DATABASE_URL)")
    assert row.met is True


def test_without_postgres_the_row_says_why_and_with_no_postgres_there_is_none() -> None:
    reason = f"{NOT_INSTALLED} (no initdb ...)"
    skipped = floors._report(_servers(None), 1, 1, False, None, postgres_skipped=reason)
    row = _row(skipped, floors.POSTGRES_ROW)
    assert row.measured == f"skipped: {reason}" and row.met is None
    assert "PostgreSQL row" not in skipped.notes[0]

    left_out = floors._report(_servers(None), 1, 1, False, None, postgres=False)
    assert len(left_out.rows) == 4 and "PostgreSQL left out (--no-postgres)." in left_out.notes[0]
    assert "PostgreSQL left out" not in floors._report(_servers(2.6), 1, 1, False, None).notes[0]


def test_the_command_lines_flags_reach_run() -> None:
    assert floors._options([]) == {"sequential": 100, "windows": 2, "litellm": True, "postgres": True}
    assert floors._options(["--quick", "--no-postgres"]) == {
        "sequential": 20,
        "windows": 1,
        "litellm": True,
        "postgres": False,
    }
    assert floors._options(["--no-litellm"])["litellm"] is False


def _no_cluster() -> NoReturn:
    raise AssertionError("no cluster should be started")


def test_start_cluster_raises_postgres_unavailable_without_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clusters, "find_postgres_bindir", lambda: None)
    with pytest.raises(clusters.PostgresUnavailable, match=f"^{NOT_INSTALLED} "):
        clusters.start_cluster()


def test_start_cluster_as_root_without_the_postgres_user_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_such_user(name: str) -> None:
        raise KeyError(name)

    monkeypatch.setattr(clusters, "find_postgres_bindir", lambda: tmp_path)
    monkeypatch.setattr(clusters.os, "geteuid", lambda: 0)
    monkeypatch.setattr(clusters.pwd, "getpwnam", no_such_user)
    with pytest.raises(clusters.PostgresUnavailable, match="'postgres' system user, and there is none"):
        clusters.start_cluster()
    assert list(tmp_path.iterdir()) == []  # nothing was run or written


async def test_without_postgresql_the_benchmark_gets_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(postgres_db.URL_VARIABLE, raising=False)
    monkeypatch.setattr(clusters, "find_postgres_bindir", lambda: None)
    with ExitStack() as stack:
        database, reason = await floors._postgres_database(stack)
    assert database is None and reason is not None and reason.startswith(NOT_INSTALLED)


def test_a_cluster_that_does_not_start_is_a_reason_and_its_log_goes_to_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fails() -> NoReturn:
        raise RuntimeError("initdb failed (1):\nno space left")

    monkeypatch.setattr(clusters, "start_cluster", fails)
    with pytest.raises(postgres_db.Unavailable, match=r"^the throwaway cluster did not start"):
        postgres_db.database().__enter__()
    assert "no space left" in capsys.readouterr().err


def test_the_environments_database_is_used_as_given_without_a_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://bench@127.0.0.1:5432/colibri"
    monkeypatch.setenv(postgres_db.URL_VARIABLE, url)
    monkeypatch.setattr(clusters, "start_cluster", _no_cluster)
    with postgres_db.database() as database:
        assert database == postgres_db.Database(url, None)


def test_the_postmaster_pid_is_the_first_line_of_its_file(tmp_path: Path) -> None:
    (tmp_path / "postmaster.pid").write_text("4242\n/tmp/colibri-postgres-x/data\n1764160000\n5432\n")
    assert postgres_db.postmaster_pid(tmp_path) == 4242


async def test_a_window_charges_the_database_tree_only_to_the_row_that_has_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # This process stands in for both the server and the database: its CPU is what the callers burn.
    monkeypatch.setattr(floors, "WINDOW_S", 0.1)

    async def busy() -> None:
        ends = time.process_time() + 0.005
        while time.process_time() < ends:
            pass

    with_database = floors._Server("postgres", URL, os.getpid(), database_pid=os.getpid())
    without = floors._Server("sqlite", URL, os.getpid())
    for server in (with_database, without):
        await floors._window(server, [busy])
    assert with_database.calls > 0 and with_database.cpu_s > 0
    assert with_database.database_cpu_s == pytest.approx(with_database.cpu_s, abs=0.03)
    assert without.cpu_s > 0 and without.database_cpu_s == 0
