"""Job SQL (see :mod:`colibri_router.store.jobs`): each function is one unit of work on the
connection, run in a worker thread. Times are milliseconds; a job that ended at or before the
expiry cutoff reads as unknown and is deleted when the next job is created."""

from __future__ import annotations

import sqlite3
from typing import Any

from colibri_router.store.jobs import JobRecord, JobStatus
from colibri_router.store.sqlite.timestamps import from_ms, to_ms
from colibri_router.store.sqlite.transactions import write_transaction

_COLUMNS = (
    "job_id, principal, tool, status, progress, cost_micro_usd, started_at_ms, updated_at_ms, owner,"
    " cancel_requested, finished_at_ms, result"
)
_LIVE = "(finished_at_ms IS NULL OR finished_at_ms > ?)"


def create(connection: sqlite3.Connection, job: JobRecord, expiry_cutoff_ms: int) -> None:
    with write_transaction(connection):
        connection.execute("DELETE FROM jobs WHERE finished_at_ms <= ?", (expiry_cutoff_ms,))
        connection.execute(
            f"INSERT INTO jobs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                job.job_id,
                job.principal,
                job.tool,
                job.status,
                job.progress,
                job.cost_micro_usd,
                to_ms(job.started_at),
                to_ms(job.updated_at),
                job.owner,
                int(job.cancel_requested),
                None if job.finished_at is None else to_ms(job.finished_at),
                job.result,
            ),
        )


def update(
    connection: sqlite3.Connection, job_id: str, *, owner: str, progress: str | None, cost_micro_usd: int, now_ms: int
) -> bool | None:
    """Record a running job's progress (renewing its owner's claim); whether a cancel was asked for,
    None when the job no longer runs under ``owner``."""
    with write_transaction(connection):
        row = connection.execute(
            "UPDATE jobs SET progress = ?, cost_micro_usd = ?, updated_at_ms = ?"
            " WHERE job_id = ? AND owner = ? AND status = 'running' RETURNING cancel_requested",
            (progress, cost_micro_usd, now_ms, job_id, owner),
        ).fetchone()
    return None if row is None else bool(row[0])


def cancel_requested(connection: sqlite3.Connection, job_id: str) -> bool:
    row = connection.execute("SELECT cancel_requested FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
    return row is not None and bool(row[0])


def finish(
    connection: sqlite3.Connection,
    job_id: str,
    *,
    owner: str | None,
    status: JobStatus,
    result: str,
    cost_micro_usd: int | None,
    now_ms: int,
) -> bool:
    """End a running job (the one ``owner`` runs, when given); False when it had already ended."""
    owned = "" if owner is None else " AND owner = ?"
    with write_transaction(connection):
        cursor = connection.execute(
            "UPDATE jobs SET status = ?, result = ?, cost_micro_usd = COALESCE(?, cost_micro_usd),"
            f" finished_at_ms = ?, updated_at_ms = ? WHERE job_id = ? AND status = 'running'{owned}",
            (status, result, cost_micro_usd, now_ms, now_ms, job_id, *(() if owner is None else (owner,))),
        )
    return cursor.rowcount == 1


def load(connection: sqlite3.Connection, job_id: str, principal: str, expiry_cutoff_ms: int) -> JobRecord | None:
    row = connection.execute(
        f"SELECT {_COLUMNS} FROM jobs WHERE job_id = ? AND principal = ? AND {_LIVE}",
        (job_id, principal, expiry_cutoff_ms),
    ).fetchone()
    return None if row is None else _record(row)


def recent(connection: sqlite3.Connection, principal: str | None, limit: int, expiry_cutoff_ms: int) -> list[JobRecord]:
    """The principal's live jobs, or every principal's (None), the most recently started first."""
    mine, who = ("principal = ? AND ", (principal,)) if principal is not None else ("", ())
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM jobs WHERE {mine}{_LIVE} ORDER BY started_at_ms DESC, rowid DESC LIMIT ?",
        (*who, expiry_cutoff_ms, limit),
    ).fetchall()
    return [_record(row) for row in rows]


def request_cancel(connection: sqlite3.Connection, job_id: str, principal: str) -> bool:
    """Mark the principal's running job for cancelling; False when it is not running (or not theirs)."""
    with write_transaction(connection):
        cursor = connection.execute(
            "UPDATE jobs SET cancel_requested = 1 WHERE job_id = ? AND principal = ? AND status = 'running'",
            (job_id, principal),
        )
    return cursor.rowcount == 1


def _record(row: tuple[Any, ...]) -> JobRecord:
    return JobRecord(
        job_id=row[0],
        principal=row[1],
        tool=row[2],
        status=row[3],
        progress=row[4],
        cost_micro_usd=row[5],
        started_at=from_ms(row[6]),
        updated_at=from_ms(row[7]),
        owner=row[8],
        cancel_requested=bool(row[9]),
        finished_at=None if row[10] is None else from_ms(row[10]),
        result=row[11],
    )
