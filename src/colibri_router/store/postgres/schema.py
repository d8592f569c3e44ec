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
    # 3: each call's attempts (the models tried, as JSON) and how many warnings it carried, for /ui.
    (
        "ALTER TABLE ledger ADD COLUMN attempts text NOT NULL DEFAULT '[]'",
        "ALTER TABLE ledger ADD COLUMN warning_count bigint NOT NULL DEFAULT 0",
    ),
    # 4: per-member rates of a team server (rpm, tpm): each admitted use in the last minute.
    (
        """CREATE TABLE rate_events (
            event_id text PRIMARY KEY,
            principal text NOT NULL,
            at timestamptz NOT NULL,
            calls integer NOT NULL,
            tokens bigint NOT NULL
        )""",
        "CREATE INDEX rate_events_by_principal ON rate_events (principal, at)",
        # One round trip per use: the member's lock, the window's totals on the database's clock, the
        # rule (colibri_router.store.rates.fits) and the event. Each statement of a volatile function
        # reads what was committed before it began, so the totals follow the lock.
        f"""CREATE FUNCTION colibri_take_rate(
            p_event_id text, p_principal text, p_window_s float8,
            p_rpm bigint, p_tpm bigint, p_calls integer, p_tokens bigint
        ) RETURNS TABLE (now_s float8, used_calls bigint, used_tokens bigint, admitted boolean)
        LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
            v_now timestamptz;
        BEGIN
            PERFORM pg_advisory_xact_lock({locks.RATE_ADMISSION_CLASS}, hashtext(p_principal));
            v_now := clock_timestamp();
            DELETE FROM rate_events r
                WHERE r.principal = p_principal AND r.at <= v_now - make_interval(secs => p_window_s);
            SELECT COALESCE(SUM(r.calls), 0)::bigint, COALESCE(SUM(r.tokens), 0)::bigint
                INTO used_calls, used_tokens FROM rate_events r WHERE r.principal = p_principal;
            admitted := (p_rpm IS NULL OR p_calls <= 0 OR used_calls + p_calls <= p_rpm)
                AND (p_tpm IS NULL OR p_tokens <= 0 OR used_tokens + p_tokens <= p_tpm);
            IF admitted THEN
                INSERT INTO rate_events (event_id, principal, at, calls, tokens)
                    VALUES (p_event_id, p_principal, v_now, p_calls, p_tokens);
            END IF;
            now_s := extract(epoch FROM v_now);
            RETURN NEXT;
        END
        $$""",
    ),
    # 5: which pool key a call used, by fingerprint; the pool keys the replicas have set aside
    # (docs/keys.md): one row per key, by fingerprint, never the key.
    (
        "ALTER TABLE ledger ADD COLUMN key_fingerprint text",
        """CREATE TABLE key_set_asides (
            provider text NOT NULL,
            fingerprint text NOT NULL,
            reason text NOT NULL,
            until double precision NOT NULL,
            strikes integer NOT NULL,
            PRIMARY KEY (provider, fingerprint)
        )""",
    ),
    # 6: jobs (colibri_router.jobs): a long call's status, progress, cost and final result.
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
