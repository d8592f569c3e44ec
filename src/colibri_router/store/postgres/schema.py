"""The PostgreSQL schema as a list of forward migrations, applied in order on first use.

Same rules as the SQLite schema: a released migration is never edited, a change is a new migration
at the end, and a database newer than this code is refused rather than written in a shape this code
does not know. The tables live in the first schema of the connection's ``search_path`` (``public``
unless the URL says ``?options=-csearch_path%3D...``), so a team can give colibri-router a schema of
its own.

Times are ``timestamptz`` (the store's clock, never the server's ``now()``, decides what expired);
money and token counts are ``bigint`` (micro-dollars, exact).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from colibri_router.store.postgres import locks

if TYPE_CHECKING:
    from colibri_router.store.postgres.connection import Connection

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: threads (with their lease) and their messages, the ledger, budget reservations.
    (
        """CREATE TABLE threads (
            thread_id text PRIMARY KEY,
            principal text NOT NULL,
            provider text NOT NULL,
            model text NOT NULL,
            title text NOT NULL DEFAULT '',
            turns integer NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            lease_token text,
            lease_expires_at timestamptz,
            -- Breaks ties in listings between threads used at the same instant: the newer first.
            created_order bigint GENERATED ALWAYS AS IDENTITY
        )""",
        "CREATE INDEX threads_by_principal ON threads (principal, updated_at)",
        "CREATE INDEX threads_by_age ON threads (updated_at)",
        # json, not jsonb: a message comes back byte for byte as it was stored (jsonb would reorder
        # keys and refuse \u0000), and an administrator can still query it with JSON operators.
        """CREATE TABLE thread_messages (
            thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
            position integer NOT NULL,
            message json NOT NULL,
            PRIMARY KEY (thread_id, position)
        )""",
        """CREATE TABLE ledger (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at timestamptz NOT NULL,
            principal text NOT NULL,
            thread_id text,
            provider text NOT NULL,
            model text NOT NULL,
            input_tokens bigint NOT NULL,
            output_tokens bigint NOT NULL,
            cached_tokens bigint NOT NULL,
            cache_write_tokens bigint NOT NULL,
            reasoning_tokens bigint NOT NULL,
            cost_micro_usd bigint,
            latency_ms bigint NOT NULL,
            outcome text NOT NULL,
            kind text
        )""",
        # Covering indexes: a budget check sums a day or a month of costs without touching the table.
        "CREATE INDEX ledger_by_time ON ledger (at) INCLUDE (cost_micro_usd)",
        "CREATE INDEX ledger_by_principal ON ledger (principal, at) INCLUDE (cost_micro_usd)",
        """CREATE TABLE budget_reservations (
            reservation_id text PRIMARY KEY,
            principal text NOT NULL,
            estimate_micro_usd bigint NOT NULL,
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL
        )""",
        "CREATE INDEX budget_reservations_by_expiry ON budget_reservations (expires_at)",
    ),
    # 2: a thread's images and documents, once per content hash (its messages refer to them).
    (
        """CREATE TABLE thread_media (
            thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
            sha256 text NOT NULL,
            data text NOT NULL,
            PRIMARY KEY (thread_id, sha256)
        )""",
    ),
    # 3: jobs (colibri_router.jobs): a long call's status, progress, cost and final result.
    (
        """CREATE TABLE jobs (
            job_id text PRIMARY KEY,
            principal text NOT NULL,
            tool text NOT NULL,
            status text NOT NULL,
            progress text,
            cost_micro_usd bigint NOT NULL DEFAULT 0,
            started_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            owner text NOT NULL,
            cancel_requested boolean NOT NULL DEFAULT false,
            finished_at timestamptz,
            -- json, not jsonb: the result comes back byte for byte as the call answered it.
            result json,
            created_order bigint GENERATED ALWAYS AS IDENTITY
        )""",
        "CREATE INDEX jobs_by_principal ON jobs (principal, started_at)",
        "CREATE INDEX jobs_by_end ON jobs (finished_at)",
    ),
)


class SchemaTooNew(Exception):
    """The database was written by a newer colibri-router."""


async def schema_version(connection: Connection) -> int:
    """The version the database is at; 0 for a database with no schema yet."""
    if await connection.fetchval("SELECT to_regclass('schema_version')") is None:
        return 0
    version: int = await connection.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_version")
    return version


async def migrate(connection: Connection) -> None:
    """Bring the database to the newest version. Several processes (replicas starting together) may
    find it empty at once: the migration lock makes them take turns, and the version is read again
    under it, so each migration runs exactly once and the others find the work done."""
    if _check_version(await schema_version(connection)) == len(MIGRATIONS):
        return
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", locks.SCHEMA_MIGRATION)
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_version"
            " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version in range(_check_version(await schema_version(connection)) + 1, len(MIGRATIONS) + 1):
            for statement in MIGRATIONS[version - 1]:
                await connection.execute(statement)
            await connection.execute("INSERT INTO schema_version (version) VALUES ($1)", version)


def _check_version(version: int) -> int:
    if version > len(MIGRATIONS):
        raise SchemaTooNew(
            f"the database has schema version {version}, written by a newer colibri-router; "
            f"this one knows versions up to {len(MIGRATIONS)}"
        )
    return version
