"""The PostgreSQL database of benchmark 9's PostgreSQL row: ``COLIBRI_BENCH_DATABASE_URL``'s, else a throwaway
cluster started with the tests' code (``tests/postgres_cluster.py``).

The throwaway cluster is the one the tests run against: ``initdb`` into a temp directory, 127.0.0.1 on a free
port, ``fsync`` and ``synchronous_commit`` off (fast rather than durable), as the ``postgres`` system user when
we are root; stopped and deleted on the way out. Its postmaster's pid (the first line of
``<data>/postmaster.pid``) lets the benchmark charge the row with the database's CPU too: every backend and
background process is a child of the postmaster. A database from the environment is someone else's: its
processes are not ours to read, so its CPU is not measured.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

URL_VARIABLE = "COLIBRI_BENCH_DATABASE_URL"
FSYNC_NOTE = "throwaway cluster, fsync and synchronous_commit off"
_TESTS = str(Path(__file__).resolve().parent.parent / "tests")


class Unavailable(Exception):
    """No database for the row: PostgreSQL is not installed, cannot run here, or did not start."""


@dataclass(frozen=True, slots=True)
class Database:
    url: str
    postmaster: int | None  # the throwaway cluster's; None for a database from COLIBRI_BENCH_DATABASE_URL


@contextmanager
def database() -> Iterator[Database]:
    """The row's database (blocks for a few seconds while a cluster starts); :class:`Unavailable` when there is
    none. A cluster started here is stopped and deleted on exit."""
    url = os.environ.get(URL_VARIABLE)
    if url:
        yield Database(url, None)
        return
    clusters = _cluster_module()
    try:
        cluster = clusters.start_cluster()
    except clusters.PostgresUnavailable as exc:
        raise Unavailable(str(exc)) from exc
    except RuntimeError as exc:  # initdb failed, or the server did not start: the details go to stderr
        print(exc, file=sys.stderr)
        raise Unavailable("the throwaway cluster did not start (its log is on stderr)") from exc
    try:
        yield Database(cluster.url(), postmaster_pid(cluster.data))
    finally:
        cluster.stop()


def postmaster_pid(data: Path) -> int:
    """The running postmaster's pid: the first line of ``<data>/postmaster.pid``."""
    return int((data / "postmaster.pid").read_text().partition("\n")[0])


def _cluster_module() -> ModuleType:
    """``tests/postgres_cluster.py``, imported only when a cluster is wanted (it imports pytest and asyncpg).

    Under pytest it is already imported (``pythonpath`` has ``tests``; ``tests/conftest.py`` loads it as a
    plugin). Run as ``python -m benchmarks...``, the directory is appended to ``sys.path``, after everything
    else, so none of the test directories (``tests/http``, ``tests/mcp``) can shadow a real package.
    """
    if _TESTS not in sys.path:
        sys.path.append(_TESTS)
    import postgres_cluster

    return postgres_cluster
