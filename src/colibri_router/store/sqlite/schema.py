"""The SQLite schema as a list of forward migrations, applied in order on open.

Rules: a migration once released is never edited (files in the wild were made by it); a change is
a new migration appended at the end; a database newer than this code is refused rather than
written in a shape this code does not know.

Times are integer milliseconds since the Unix epoch (UTC); money is integer micro-dollars.
"""

from __future__ import annotations

import sqlite3
import time

from colibri_router.store.sqlite.transactions import write_transaction

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: threads, their messages (one row each, so an append writes only what is new), the ledger.
    (
        """CREATE TABLE threads (
            thread_id TEXT PRIMARY KEY,
            principal TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            turns INTEGER NOT NULL DEFAULT 0,
            created_at_ms INTEGER NOT NULL,
            updated_at_ms INTEGER NOT NULL
        )""",
        "CREATE INDEX threads_by_principal ON threads (principal, updated_at_ms)",
        "CREATE INDEX threads_by_age ON threads (updated_at_ms)",
        """CREATE TABLE thread_messages (
            thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            message TEXT NOT NULL,
            PRIMARY KEY (thread_id, position)
        ) WITHOUT ROWID""",
        """CREATE TABLE ledger (
            id INTEGER PRIMARY KEY,
            at_ms INTEGER NOT NULL,
            principal TEXT NOT NULL,
            thread_id TEXT,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cached_tokens INTEGER NOT NULL,
            cache_write_tokens INTEGER NOT NULL,
            reasoning_tokens INTEGER NOT NULL,
            cost_micro_usd INTEGER,
            latency_ms INTEGER NOT NULL,
            outcome TEXT NOT NULL,
            kind TEXT
        )""",
        # Covering indexes: a budget check sums a day or a month of costs without touching the table.
        "CREATE INDEX ledger_by_time ON ledger (at_ms, cost_micro_usd)",
        "CREATE INDEX ledger_by_principal ON ledger (principal, at_ms, cost_micro_usd)",
    ),
    # 2: concurrency: a lease per thread (one call at a time continues it), budget reservations.
    (
        "ALTER TABLE threads ADD COLUMN lease_token TEXT",
        "ALTER TABLE threads ADD COLUMN lease_expires_at_ms INTEGER",
        """CREATE TABLE budget_reservations (
            reservation_id TEXT PRIMARY KEY,
            principal TEXT NOT NULL,
            estimate_micro_usd INTEGER NOT NULL,
            created_at_ms INTEGER NOT NULL,
            expires_at_ms INTEGER NOT NULL
        )""",
        "CREATE INDEX budget_reservations_by_expiry ON budget_reservations (expires_at_ms)",
    ),
    # 2: a thread's images and documents, once per content hash (its messages refer to them).
    (
        """CREATE TABLE thread_media (
            thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
            sha256 TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (thread_id, sha256)
        )""",
    ),
    # 4: each call's attempts (the models tried, as JSON) and how many warnings it carried, for /ui.
    (
        "ALTER TABLE ledger ADD COLUMN attempts TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE ledger ADD COLUMN warning_count INTEGER NOT NULL DEFAULT 0",
    ),
    # 5: per-member rates of a team server (rpm, tpm): each admitted use in the last minute.
    (
        """CREATE TABLE rate_events (
            event_id TEXT PRIMARY KEY,
            principal TEXT NOT NULL,
            at_ms INTEGER NOT NULL,
            calls INTEGER NOT NULL,
            tokens INTEGER NOT NULL
        )""",
        "CREATE INDEX rate_events_by_principal ON rate_events (principal, at_ms)",
    ),
    # 6: which pool key a call used, by fingerprint (docs/keys.md).
    ("ALTER TABLE ledger ADD COLUMN key_fingerprint TEXT",),
    # 7: jobs (colibri_router.jobs): a long call's status, progress, cost and final result.
    (
        """CREATE TABLE jobs (
            job_id TEXT PRIMARY KEY,
            principal TEXT NOT NULL,
            tool TEXT NOT NULL,
            status TEXT NOT NULL,
            progress TEXT,
            cost_micro_usd INTEGER NOT NULL DEFAULT 0,
            started_at_ms INTEGER NOT NULL,
            updated_at_ms INTEGER NOT NULL,
            owner TEXT NOT NULL,
            cancel_requested INTEGER NOT NULL DEFAULT 0,
            finished_at_ms INTEGER,
            result TEXT
        )""",
        "CREATE INDEX jobs_by_principal ON jobs (principal, started_at_ms)",
        "CREATE INDEX jobs_by_end ON jobs (finished_at_ms)",
    ),
)

CURRENT_VERSION = len(MIGRATIONS)


class SchemaTooNew(Exception):
    """The file was written by a newer colibri-router."""


def schema_version(connection: sqlite3.Connection) -> int:
    """The version the file is at; 0 for a file with no schema yet."""
    has_table = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if has_table is None:
        return 0
    version: int = connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
    return version


def migrate(connection: sqlite3.Connection) -> None:
    """Bring the file to :data:`CURRENT_VERSION`. Several processes may open a new file at once:
    the version is read again under the write lock, so each migration runs exactly once."""
    if _check_version(schema_version(connection)) == CURRENT_VERSION:
        return
    with write_transaction(connection):
        connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL)"
        )
        for version in range(_check_version(schema_version(connection)) + 1, CURRENT_VERSION + 1):
            for statement in MIGRATIONS[version - 1]:
                connection.execute(statement)
            connection.execute(
                "INSERT INTO schema_version (version, applied_at_ms) VALUES (?, ?)", (version, int(time.time() * 1000))
            )


def _check_version(version: int) -> int:
    if version > CURRENT_VERSION:
        raise SchemaTooNew(
            f"the database has schema version {version}, written by a newer colibri-router; "
            f"this one knows versions up to {CURRENT_VERSION}"
        )
    return version
