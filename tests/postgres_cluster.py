"""A throwaway PostgreSQL server for the tests: a pytest plugin (``tests/conftest.py`` registers it),
so its fixtures serve every test directory.

Fixtures:

- ``postgres_cluster`` (session): the running server, a :class:`PostgresCluster`; started the first
  time a test asks for it, so a run without PostgreSQL tests never starts it.
- ``postgres_url`` (session): the URL of a database made for the session, ``colibri``.
- ``fresh_postgres_database``: a function; each call returns the URL of a new, empty database, and
  they are dropped after the test. Each is a schema of its own in the session's database, named by
  the URL (``?options=-csearch_path%3Dtest_7``, which asyncpg and libpq both read): an application
  using unqualified names sees an empty database, and one costs a few milliseconds to make, where
  ``CREATE DATABASE`` takes 20 to 300. What a schema does not separate is what a database does
  not either: ``LISTEN``/``NOTIFY`` channels and advisory locks span the session's database.

The server: ``initdb`` into a temp directory, listening on 127.0.0.1 on a free port with its unix
socket in that directory, ``fsync`` off (nothing here has to survive a crash). Loopback connections
are trusted, except for roles granted :data:`PASSWORD_LOGIN_ROLE`, which must give their password, so
a test can see authentication fail. It is stopped (immediate mode) and deleted when the session ends.

As root (CI runs as root), initdb and the server refuse to run: they run as the ``postgres`` system
user (Debian's package creates it), through ``runuser`` or ``setpriv``, in a directory that user owns.

Without PostgreSQL installed, :func:`start_cluster` raises :class:`PostgresUnavailable`, and the
tests that need it are skipped with the command that installs it; when the ``CI`` variable is set they
fail instead: CI must run them. (Benchmark 9 starts a cluster with :func:`start_cluster` too, outside
pytest: its PostgreSQL row then says why it was skipped.)
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import asyncpg
import pytest

if sys.platform != "win32":
    # POSIX only. This module is a plugin of every test run, and CI's Windows job (which runs no
    # PostgreSQL test) must still import it.
    import pwd

T = TypeVar("T")

SUPERUSER = "postgres"
SESSION_DATABASE = "colibri"
PASSWORD_LOGIN_ROLE = "password_login"
SYSTEM_USER = "postgres"
INSTALL_HINT = "sudo apt-get install postgresql (Debian, Ubuntu), or your system's PostgreSQL package"
START_ATTEMPTS = 3  # a free port can be taken by someone else between our check and the server's bind

_HBA = f"""# written by tests/postgres_cluster.py
local all all trust
host all +{PASSWORD_LOGIN_ROLE} 127.0.0.1/32 scram-sha-256
host all all 127.0.0.1/32 trust
"""
_SETTINGS = """
# tests/postgres_cluster.py: a throwaway server, fast rather than durable
listen_addresses = '127.0.0.1'
unix_socket_directories = '{socket_directory}'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 300
"""


class PostgresUnavailable(Exception):
    """No cluster can be started here: PostgreSQL is not installed, or cannot run as this user."""


class PostgresCluster:
    """A running server (see the module docstring). Its methods may be called from any thread,
    inside or outside an event loop: the administrative SQL runs on a thread of its own."""

    def __init__(self, bindir: Path, directory: Path, system_user: str | None) -> None:
        self.bindir = bindir
        self.directory = directory
        self.port = 0
        self._system_user = system_user
        self._numbers = itertools.count(1)
        self._admin: _AdminSession | None = None

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, database: str = SESSION_DATABASE, *, user: str = SUPERUSER, password: str | None = None) -> str:
        credentials = user if password is None else f"{user}:{password}"
        return f"postgresql://{credentials}@127.0.0.1:{self.port}/{database}"

    def execute(self, *statements: str, database: str = "postgres") -> None:
        """Run ``statements`` one after another as the superuser."""

        async def run(connection: asyncpg.Connection[asyncpg.Record]) -> None:
            for statement in statements:
                await connection.execute(statement)

        self._as_superuser(run, database)

    def fetchval(self, query: str, database: str = "postgres") -> Any:
        """The first value of ``query``'s first row, as the superuser."""
        return self._as_superuser(lambda connection: connection.fetchval(query), database)

    def fresh_database(self) -> str:
        """The URL of a new, empty database (a schema of the session's database: see above)."""
        schema = f"test_{next(self._numbers)}"
        self.execute(f"CREATE SCHEMA {schema}", database=SESSION_DATABASE)
        return f"{self.url(SESSION_DATABASE)}?options=-csearch_path%3D{schema}"

    def drop_fresh_databases(self, urls: list[str]) -> None:
        schemas = [url.rpartition("%3D")[2] for url in urls]
        self.execute(*(f"DROP SCHEMA {schema} CASCADE" for schema in schemas), database=SESSION_DATABASE)

    def start(self) -> None:
        initdb: list[str | Path] = [self.bindir / "initdb", "--pgdata", self.data, "--username", SUPERUSER]
        self._run([*initdb, "--auth", "trust", "--encoding", "UTF8", "--locale", "C", "--no-sync"])
        # Rewritten in place, so the files keep the server's ownership.
        (self.data / "pg_hba.conf").write_text(_HBA)
        with (self.data / "postgresql.conf").open("a") as settings:
            settings.write(_SETTINGS.format(socket_directory=self.directory))
        for _ in range(START_ATTEMPTS):
            self.port = _free_port()
            started = self._pg_ctl("start", "--log", self.directory / "server.log", "--wait", "-o", f"-p {self.port}")
            if started.returncode == 0:
                break
        else:
            log = (self.directory / "server.log").read_text(errors="replace")
            raise RuntimeError(f"PostgreSQL did not start:\n{started.stderr}\n{log[-3000:]}")
        self.execute(f"CREATE ROLE {PASSWORD_LOGIN_ROLE} NOLOGIN", f"CREATE DATABASE {SESSION_DATABASE}")

    def stop_server(self) -> None:
        """Stop the server (fast mode: sessions are ended, as in a restart), keeping its data."""
        stopped = self._pg_ctl("stop", "--mode", "fast", "--wait")
        if stopped.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not stop:\n{stopped.stderr}")

    def start_server(self) -> None:
        """Start the stopped server again on its port."""
        log = self.directory / "server.log"
        started = self._pg_ctl("start", "--log", log, "--wait", "-o", f"-p {self.port}")
        if started.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not start again:\n{started.stderr}\n{log.read_text()[-3000:]}")

    def stop(self) -> None:
        try:
            if self._admin is not None:
                self._admin.close()
        finally:
            if (self.data / "postmaster.pid").exists():
                self._pg_ctl("stop", "--mode", "immediate", "--wait")
            shutil.rmtree(self.directory, ignore_errors=True)

    def _as_superuser(self, work: Callable[[asyncpg.Connection[asyncpg.Record]], Awaitable[T]], database: str) -> T:
        if self._admin is None:
            self._admin = _AdminSession(self.url)
        return self._admin.run(work, database)

    def _pg_ctl(self, action: str, *options: str | Path) -> subprocess.CompletedProcess[str]:
        return self._run([self.bindir / "pg_ctl", action, "--pgdata", self.data, *options], check=False)

    def _run(self, command: list[str | Path], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        as_user = [] if self._system_user is None else _switch_user(self._system_user)
        result = subprocess.run(
            [*as_user, *map(str, command)], cwd=self.directory, capture_output=True, text=True, check=False
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"{Path(command[0]).name} failed ({result.returncode}):\n{result.stderr}")
        return result


class _AdminSession:
    """Superuser connections (one per database, kept open) on an event loop of its own, running on
    a thread of its own: a test may call in from anywhere, its own event loop running or not, and
    each call costs one round trip rather than a connection."""

    def __init__(self, url: Callable[[str], str]) -> None:
        self._url = url
        self._connections: dict[str, asyncpg.Connection[asyncpg.Record]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="postgres-admin", daemon=True)
        self._thread.start()

    def run(self, work: Callable[[asyncpg.Connection[asyncpg.Record]], Awaitable[T]], database: str) -> T:
        return asyncio.run_coroutine_threadsafe(self._run(work, database), self._loop).result()

    def close(self) -> None:
        """Drop the connections (the server is about to stop: no goodbye needed) and the thread."""
        asyncio.run_coroutine_threadsafe(self._drop_connections(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def _run(self, work: Callable[[asyncpg.Connection[asyncpg.Record]], Awaitable[T]], database: str) -> T:
        connection = self._connections.get(database)
        if connection is None or connection.is_closed():
            connection = self._connections[database] = await asyncpg.connect(self._url(database))
        return await work(connection)

    async def _drop_connections(self) -> None:
        for connection in self._connections.values():
            connection.terminate()
        await asyncio.sleep(0)  # their sockets close on the loop's next turn


def find_postgres_bindir() -> Path | None:
    """Where initdb and pg_ctl are: ``pg_config --bindir``, else the newest
    ``/usr/lib/postgresql/*/bin`` (Debian keeps them off the PATH), else the PATH."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        answer = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if answer.returncode == 0:
            candidates.append(Path(answer.stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_of, reverse=True)
    initdb = shutil.which("initdb")
    if initdb is not None:
        candidates.append(Path(initdb).parent)
    return next((bindir for bindir in candidates if _has_server_tools(bindir)), None)


def start_cluster() -> PostgresCluster:
    """A running cluster (stop it with :meth:`PostgresCluster.stop`); :class:`PostgresUnavailable` when
    PostgreSQL is not installed or cannot run as this user."""
    bindir = find_postgres_bindir()
    if bindir is None:
        raise PostgresUnavailable(
            "PostgreSQL is not installed (no initdb in pg_config --bindir, /usr/lib/postgresql/*/bin or PATH)"
        )
    system_user = _server_user()
    directory = Path(tempfile.mkdtemp(prefix="colibri-postgres-"))
    if system_user is not None:
        account = pwd.getpwnam(system_user)
        os.chown(directory, account.pw_uid, account.pw_gid)
    cluster = PostgresCluster(bindir, directory, system_user)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    try:
        cluster = start_cluster()
    except PostgresUnavailable as exc:
        _unavailable(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    return postgres_cluster.url(SESSION_DATABASE)


@pytest.fixture
def fresh_postgres_database(postgres_cluster: PostgresCluster) -> Iterator[Callable[[], str]]:
    created: list[str] = []

    def create() -> str:
        created.append(postgres_cluster.fresh_database())
        return created[-1]

    yield create
    if created:
        postgres_cluster.drop_fresh_databases(created)


def _server_user() -> str | None:
    """None to run the server as ourselves; the system user to run it as when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        raise PostgresUnavailable(
            f"as root, PostgreSQL must run as the {SYSTEM_USER!r} system user, and there is none"
        ) from None
    if shutil.which("runuser") is None and shutil.which("setpriv") is None:
        raise PostgresUnavailable(
            f"as root, PostgreSQL must run as {SYSTEM_USER!r}, and neither runuser nor setpriv is here"
        )
    return SYSTEM_USER


def _switch_user(user: str) -> list[str]:
    if shutil.which("runuser") is not None:
        return ["runuser", "-u", user, "--"]
    account = pwd.getpwnam(user)
    return ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups"]


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the PostgreSQL tests ({INSTALL_HINT})", pytrace=False)
    pytest.skip(f"{reason}; to run the PostgreSQL tests: {INSTALL_HINT}")


def _has_server_tools(bindir: Path) -> bool:
    return all(os.access(bindir / tool, os.X_OK) for tool in ("initdb", "pg_ctl"))


def _version_of(bindir: Path) -> tuple[int, ...]:
    return tuple(int(number) for number in re.findall(r"\d+", bindir.parent.name))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
