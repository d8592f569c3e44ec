"""The storage interface: conversation threads, the usage ledger and budget reservations.

The router and the tools use only :class:`Store` and the records and errors exported here; a
backend implements it: SQLite (one file per user, shared by their processes) or PostgreSQL (one
database shared by the replicas of a team server, which also pass cancellations through it: see
:class:`CancelBroadcast`).
Every method is async and takes the caller's ``principal`` (the local user name over stdio, the
token's name over HTTP), so one database can keep callers apart. Where a method accepts
``principal=None`` it acts for an administrator: every caller's threads or usage.

A call on a thread goes like this (``wait_s`` is how long to wait for a concurrent call)::

    async with store.claim_thread(thread_id, principal, wait_s=30) as lease:
        history = (await store.load_thread(thread_id, principal)).messages
        ...                                    # the upstream call, no transaction held
        await store.append_turns(thread_id, principal, new_turns, provider, model, lease=lease)

and the ledger and budgets like this (``settle`` belongs in a shielded ``finally``, so that a
cancelled call still leaves its row)::

    reservation = await store.reserve_budget(principal, estimate_micro_usd, limits)  # or BudgetExceeded
    try: ...                                   # the upstream call
    finally: await store.settle(reservation, LedgerRow(...))

Calls with no budget configured may skip the reservation and use ``record_call``.

Environment, read when :func:`open_store` is called, never at import:

- ``COLIBRI_STORE``: ``off`` turns the store off (:func:`open_store` returns None: no threads, no
  ledger, no budgets); unset, empty or ``on`` turns it on.
- ``COLIBRI_DATABASE_URL``: the database. ``sqlite:///relative/path.db`` (from the current
  directory), ``sqlite:////absolute/path.db``, or ``postgresql://user:password@host:port/database``
  (``postgres://`` too; libpq's options in the query, e.g. ``?sslmode=require``, or
  ``?options=-csearch_path%3Dcolibri`` for a schema of its own; PostgreSQL needs the ``postgres``
  extra: ``pip install 'colibri-router[postgres]'``). Unset: ``colibri.db`` in the state directory.
- ``COLIBRI_STATE_DIR``: the directory of ``colibri.db``; else the platform's user state directory
  for ``colibri-router`` (``$XDG_STATE_HOME/colibri-router`` on Linux).

Nothing touches the disk or the network until the first method call, which creates the SQLite file
(and its directory) or the PostgreSQL schema. Any failure of the database itself (unwritable,
corrupt, unreachable, newer schema) is a :class:`StoreError` naming the database (a PostgreSQL URL
without its password) and the cause.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import SplitResult, unquote, unquote_plus, urlsplit, urlunsplit

from colibri_router.errors import ConfigError
from colibri_router.settings import Settings, load_settings
from colibri_router.store.budget import BudgetLimits, Reservation
from colibri_router.store.calls import CallQuery, DaySpend, SpendBy, StoredCall
from colibri_router.store.errors import BudgetExceeded, BudgetScope, StoreError, ThreadBusy, ThreadNotFound
from colibri_router.store.grouping import ExpectedWrite
from colibri_router.store.jobs import JobRecord, JobStatus
from colibri_router.store.money import format_usd, micro_to_usd, usd_to_micro
from colibri_router.store.records import (
    GroupBy,
    LedgerAttempt,
    LedgerRow,
    StoredThread,
    ThreadLease,
    ThreadSummary,
    UsageReport,
    UsageTotals,
)
from colibri_router.store.utc_windows import Clock, Since, utc_now

__all__ = [
    "DATABASE_FILENAME",
    "DEFAULT_THREAD_TTL_DAYS",
    "BudgetExceeded",
    "BudgetLimits",
    "BudgetScope",
    "CallQuery",
    "CancelBroadcast",
    "Clock",
    "DaySpend",
    "ExpectedWrite",
    "GroupBy",
    "JobRecord",
    "JobStatus",
    "KeySharing",
    "LedgerAttempt",
    "LedgerRow",
    "Reservation",
    "Since",
    "SpendBy",
    "Store",
    "StoreError",
    "StoredCall",
    "StoredThread",
    "ThreadBusy",
    "ThreadLease",
    "ThreadNotFound",
    "ThreadSummary",
    "UsageReport",
    "UsageTotals",
    "check_database",
    "database_location",
    "default_state_dir",
    "format_usd",
    "import_store_module",
    "micro_to_usd",
    "open_store",
    "parse_database_url",
    "shared_store",
    "usd_to_micro",
    "without_password",
]

DATABASE_FILENAME = "colibri.db"
DEFAULT_THREAD_TTL_DAYS = 30.0


class Store(Protocol):
    """What every backend provides. Unknown, expired and other principals' threads all raise
    :class:`ThreadNotFound` (one answer, so a thread id tells a caller nothing about others)."""

    @property
    def location(self) -> str:
        """Where the data lives, for messages and logs: the SQLite file's path, or the PostgreSQL
        URL without its password."""
        ...

    async def create_thread(self, principal: str, provider: str, model: str) -> str:
        """A new, empty thread; returns its id: ``th_`` and 20 random URL-safe characters."""
        ...

    async def load_thread(self, thread_id: str, principal: str | None) -> StoredThread:
        """The thread and all its messages, in order. Reading is not using: only creating and
        appending restart the thread's time to live."""
        ...

    async def append_turns(
        self,
        thread_id: str,
        principal: str,
        messages: Sequence[Mapping[str, Any]],
        provider: str,
        model: str,
        *,
        lease: ThreadLease | None = None,
    ) -> None:
        """Store ``messages`` (JSON-serializable Anthropic Messages-shape dicts) after the thread's
        last one, in one transaction, and mark the thread used now by ``provider``/``model``.

        Refused with :class:`ThreadBusy` while another call holds the thread's lease: pass the
        ``lease`` from :meth:`claim_thread` when you hold it. The first user text becomes the title."""
        ...

    async def list_threads(self, principal: str | None, limit: int = 20) -> list[ThreadSummary]:
        """The most recently used threads first, at most ``limit``; expired ones are purged."""
        ...

    async def delete_thread(self, thread_id: str, principal: str | None) -> bool:
        """True if the thread existed (and the principal may see it) and is now gone."""
        ...

    def claim_thread(self, thread_id: str, principal: str, wait_s: float) -> AbstractAsyncContextManager[ThreadLease]:
        """Hold the thread for one call: ``async with`` waits up to ``wait_s`` seconds while another
        call (in any process) holds it, then raises :class:`ThreadBusy`; raises
        :class:`ThreadNotFound` at once for a thread the principal cannot see. The lease is
        released on exit and lapses by itself if its process dies. No transaction stays open."""
        ...

    async def record_call(self, row: LedgerRow) -> None:
        """Write one ledger row (a call that reserved no budget)."""
        ...

    async def usage_report(self, principal: str | None, since: Since = "all", by: GroupBy | None = None) -> UsageReport:
        """Totals of the ledger rows in the ``since`` window (calendar days in UTC, today included),
        per ``by`` group and overall, for one principal or (None) everyone."""
        ...

    async def get_call(self, call_id: int, principal: str | None) -> StoredCall | None:
        """One ledger row by its id; None when there is none, or it is another principal's."""
        ...

    async def list_calls(self, query: CallQuery) -> list[StoredCall]:
        """Ledger rows under ``query``'s filters, newest first."""
        ...

    async def spend_by_day(self, principal: str | None, since: datetime, by: SpendBy) -> list[DaySpend]:
        """Calls and cost per UTC day and member (``by="principal"``) or model, from ``since`` on, for
        one principal or (None) everyone; in day order, then key order."""
        ...

    async def reserve_budget(self, principal: str, estimate_micro_usd: int, limits: BudgetLimits) -> Reservation:
        """Admit a call under ``limits`` and reserve its worst-case estimate, or raise
        :class:`BudgetExceeded`. The exact rule is in :mod:`colibri_router.store.budget`."""
        ...

    async def settle(self, reservation: Reservation, row: LedgerRow) -> None:
        """Write the admitted call's ledger row and drop its reservation, in one transaction."""
        ...

    # Jobs (colibri_router.jobs; the rows are colibri_router.store.jobs's). ``ttl_s``: how long an
    # ended job stays readable.

    async def create_job(self, job: JobRecord, ttl_s: float) -> None:
        """Store a new job's row (and delete the jobs that ended more than ``ttl_s`` ago)."""
        ...

    async def update_job(self, job_id: str, owner: str, progress: str | None, cost_micro_usd: int) -> bool | None:
        """Record a running job's progress and cost, renewing ``owner``'s claim on it; whether a
        cancel was asked for, or None when the job no longer runs under ``owner``."""
        ...

    async def job_cancel_requested(self, job_id: str) -> bool:
        """Whether a cancel was asked for the job (read only)."""
        ...

    async def finish_job(
        self, job_id: str, owner: str | None, status: JobStatus, result: str, cost_micro_usd: int | None
    ) -> bool:
        """End a running job with its ``result`` (JSON), if ``owner`` (when given) still runs it;
        False when it had ended already."""
        ...

    async def load_job(self, job_id: str, principal: str, ttl_s: float) -> JobRecord | None:
        """The principal's job; None for an unknown, expired or another principal's one."""
        ...

    async def list_jobs(self, principal: str, limit: int, ttl_s: float) -> list[JobRecord]:
        """The principal's jobs, the most recently started first, at most ``limit``."""
        ...

    async def list_team_jobs(self, principal: str | None, limit: int, ttl_s: float) -> list[JobRecord]:
        """Every member's jobs (``principal`` None) or one member's, the most recently started first,
        at most ``limit``: the /ui jobs page's read (the tools read :meth:`list_jobs`)."""
        ...

    async def request_job_cancel(self, job_id: str, principal: str) -> bool:
        """Ask the process running the principal's job to cancel it; False when it is not running."""
        ...

    async def check(self) -> None:
        """Reach the database with one trivial statement (creating or migrating it on first use, like
        any method); a :class:`StoreError` when it cannot be reached or used. ``/readyz`` asks it."""
        ...

    async def aclose(self) -> None:
        """Release the connection (PostgreSQL: this event loop's pool); the store must not be used
        afterwards."""
        ...


@runtime_checkable
class CancelBroadcast(Protocol):
    """A store that can pass cancellations between the server processes sharing it (PostgreSQL's
    NOTIFY/LISTEN): a team server's replicas route a client's cancellation to the call in flight."""

    async def publish_cancel(self, key: str) -> None:
        """Tell every listening process (this one included) to cancel the call under ``key``."""
        ...

    def cancel_listener(self, on_cancel: Callable[[str], None]) -> AbstractAsyncContextManager[None]:
        """While entered, ``on_cancel(key)`` runs in this event loop for every published key."""
        ...


@runtime_checkable
class KeySharing(Protocol):
    """A store through which a team server's replicas share the pool keys they set aside
    (PostgreSQL; docs/keys.md). Rows are ``(provider, fingerprint, reason, until, strikes)``, ``until``
    in seconds since the epoch; never a key."""

    async def key_set_asides(self, now: float) -> list[tuple[str, str, str, float, int]]: ...

    async def set_key_aside(self, row: tuple[str, str, str, float, int], now: float) -> None: ...

    async def clear_key(self, provider: str, fingerprint: str) -> None: ...


def open_store(
    state_dir: Path | None = None,
    *,
    thread_ttl_days: float = DEFAULT_THREAD_TTL_DAYS,
    clock: Clock = utc_now,
) -> Store | None:
    """A store, or None when ``COLIBRI_STORE=off``. Cheap: nothing is opened yet.

    The database is ``COLIBRI_DATABASE_URL``'s when it is set, else ``colibri.db`` in ``state_dir``
    (by default :func:`default_state_dir`); ``thread_ttl_days`` is ``COLIBRI_THREAD_TTL_DAYS`` as
    the caller's settings read it (fractions allowed)."""
    settings = load_settings()
    if settings.store == "off":
        return None
    return _open(database_location(settings, state_dir), thread_ttl_days, clock)


_shared: dict[tuple[Path | str, float], Store] = {}


def shared_store(settings: Settings) -> Store | None:
    """The process's store for the configured database and thread lifetime (None when
    ``COLIBRI_STORE`` is off): one store (one connection, or one pool) serves every call of a
    server process."""
    if settings.store == "off":
        return None
    key = (database_location(settings), settings.thread_ttl_days)
    store = _shared.get(key)
    if store is None:
        store = _shared[key] = _open(*key, clock=utc_now)
    return store


def database_location(settings: Settings, state_dir: Path | None = None) -> Path | str:
    """The configured database: a SQLite file's path, or a PostgreSQL URL as configured (password
    included: it is for connecting, never for showing; see :func:`without_password`)."""
    if settings.database_url is not None:
        return parse_database_url(settings.database_url)
    return (state_dir if state_dir is not None else _state_dir(settings)) / DATABASE_FILENAME


def check_database(settings: Settings) -> None:
    """Refuse, as a :class:`ConfigError`, a configured database this install cannot use: a malformed
    ``COLIBRI_DATABASE_URL``, or a PostgreSQL one without asyncpg. Nothing is opened or imported:
    for a server's start-up, which must refuse before it serves rather than fail in its lifespan."""
    if settings.store != "off":
        _require_driver(database_location(settings))


def _require_driver(location: Path | str) -> None:
    if isinstance(location, str) and importlib.util.find_spec("asyncpg") is None:
        raise ConfigError(
            "COLIBRI_DATABASE_URL names a PostgreSQL database, which needs asyncpg: "
            "pip install 'colibri-router[postgres]'"
        )


def import_store_module(settings: Settings) -> None:
    """Import the configured store's module (and its driver) without opening anything: for a server
    that loads at start what its first call would load."""
    if settings.store != "off":
        _store_class(database_location(settings))


def _open(location: Path | str, thread_ttl_days: float, clock: Clock) -> Store:
    return _store_class(location)(location, thread_ttl_days=thread_ttl_days, clock=clock)


def _store_class(location: Path | str) -> Callable[..., Store]:
    """The store for ``location``, its module imported now: sqlite3 or asyncpg only when wanted."""
    if isinstance(location, Path):
        # Only the backend in use is imported: sqlite3, or asyncpg (the postgres extra).
        from colibri_router.store.sqlite import SqliteStore

        return SqliteStore
    _require_driver(location)
    # Only the backend in use is imported: sqlite3, or asyncpg (the postgres extra).
    from colibri_router.store.postgres import PostgresStore

    return PostgresStore


_POSTGRES_SCHEMES = frozenset({"postgresql", "postgres"})
_URL_FORMS = "sqlite:///relative/path.db, sqlite:////absolute/path.db or postgresql://user@host:port/database"
_HIGHEST_PORT = 65535


def parse_database_url(url: str) -> Path | str:
    """``COLIBRI_DATABASE_URL`` read: the SQLite file's absolute path (a relative one is taken from
    the current directory, percent-escapes decoded), or the PostgreSQL URL unchanged. Any other
    scheme, or a malformed URL, is a :class:`ConfigError` naming the variable; no message repeats
    the URL or any part of it, since it may hold a password."""
    try:
        parts = urlsplit(url)
    except ValueError as error:  # an unclosed IPv6 bracket, say
        raise _url_error("it is not a valid URL") from error
    if parts.scheme == "sqlite":
        return _sqlite_path(parts)
    if parts.scheme in _POSTGRES_SCHEMES:
        _check_ports(parts.netloc.rpartition("@")[2])
        return url
    raise _url_error(f"it must be one of {_URL_FORMS}")


def _sqlite_path(parts: SplitResult) -> Path:
    if parts.netloc or parts.query or parts.fragment or not parts.path.startswith("/"):
        raise _url_error("a SQLite URL is sqlite:/// and a relative path, or sqlite://// and an absolute one")
    # sqlite:///x.db has the path "/x.db": that first slash ends the (empty) host, the rest is x.db.
    relative_or_absolute = parts.path[1:]
    if not relative_or_absolute or relative_or_absolute.endswith("/"):
        raise _url_error("a SQLite URL names a file, not a directory")
    return Path(unquote(relative_or_absolute)).absolute()


def _check_ports(hosts: str) -> None:
    """libpq's hosts part: ``host``, ``host:port`` or ``[ipv6]:port``, several of them comma-separated."""
    for host in hosts.split(","):
        if host.endswith("]"):
            continue  # an IPv6 address in brackets, with no port
        _, colon, port = host.rpartition(":")
        if colon and not (port.isascii() and port.isdigit() and 1 <= int(port) <= _HIGHEST_PORT):
            raise _url_error(f"a port must be a number from 1 to {_HIGHEST_PORT}")


def _url_error(problem: str) -> ConfigError:
    return ConfigError(f"COLIBRI_DATABASE_URL is not usable: {problem}")


def without_password(url: str) -> str:
    """``url`` with its password removed (``user:password@`` becomes ``user@``, and a ``password``
    query parameter goes), for messages and logs."""
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    query = "&".join(
        parameter for parameter in parts.query.split("&") if unquote_plus(parameter.partition("=")[0]) != "password"
    )
    return urlunsplit(parts._replace(netloc=f"{user}@{hosts}" if user else hosts, query=query))


def default_state_dir() -> Path:
    """``COLIBRI_STATE_DIR`` if set, else the user state directory of colibri-router."""
    return _state_dir(load_settings())


def _state_dir(settings: Settings) -> Path:
    if settings.state_dir:
        return Path(settings.state_dir).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("colibri-router"))
