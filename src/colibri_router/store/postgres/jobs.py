"""Job SQL (see :mod:`colibri_router.store.jobs`): each function is one unit of work on a pooled
connection. A job that ended at or before the expiry cutoff reads as unknown and is deleted when
the next job is created."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from colibri_router.store.jobs import JobRecord, JobStatus
from colibri_router.store.postgres.connection import Connection

_COLUMNS = (
    "job_id, principal, tool, status, progress, cost_micro_usd, started_at, updated_at, owner,"
    " cancel_requested, finished_at, result"
)
_LIVE = "(finished_at IS NULL OR finished_at > $3)"


async def create(connection: Connection, job: JobRecord, expiry_cutoff: datetime) -> None:
    await connection.execute(
        "DELETE FROM jobs WHERE job_id IN (SELECT job_id FROM jobs WHERE finished_at <= $1 FOR UPDATE SKIP LOCKED)",
        expiry_cutoff,
    )
    await connection.execute(
        f"INSERT INTO jobs ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        job.job_id,
        job.principal,
        job.tool,
        job.status,
        job.progress,
        job.cost_micro_usd,
        job.started_at,
        job.updated_at,
        job.owner,
        job.cancel_requested,
        job.finished_at,
        job.result,
    )


async def update(
    connection: Connection, job_id: str, *, owner: str, progress: str | None, cost_micro_usd: int, now: datetime
) -> bool | None:
    """Record a running job's progress (renewing its owner's claim); whether a cancel was asked for,
    None when the job no longer runs under ``owner``."""
    flag: bool | None = await connection.fetchval(
        "UPDATE jobs SET progress = $1, cost_micro_usd = $2, updated_at = $3"
        " WHERE job_id = $4 AND owner = $5 AND status = 'running' RETURNING cancel_requested",
        progress,
        cost_micro_usd,
        now,
        job_id,
        owner,
    )
    return flag


async def cancel_requested(connection: Connection, job_id: str) -> bool:
    return bool(await connection.fetchval("SELECT cancel_requested FROM jobs WHERE job_id = $1", job_id))


async def finish(
    connection: Connection,
    job_id: str,
    *,
    owner: str | None,
    status: JobStatus,
    result: str,
    cost_micro_usd: int | None,
    now: datetime,
) -> bool:
    """End a running job (the one ``owner`` runs, when given); False when it had already ended."""
    done = await connection.execute(
        "UPDATE jobs SET status = $1, result = $2, cost_micro_usd = COALESCE($3, cost_micro_usd),"
        " finished_at = $4, updated_at = $4 WHERE job_id = $5 AND status = 'running'"
        " AND ($6::text IS NULL OR owner = $6)",
        status,
        result,
        cost_micro_usd,
        now,
        job_id,
        owner,
    )
    return bool(done == "UPDATE 1")


async def load(connection: Connection, job_id: str, principal: str, expiry_cutoff: datetime) -> JobRecord | None:
    row = await connection.fetchrow(
        f"SELECT {_COLUMNS} FROM jobs WHERE job_id = $1 AND principal = $2 AND {_LIVE}",
        job_id,
        principal,
        expiry_cutoff,
    )
    return None if row is None else _record(row)


async def recent(connection: Connection, principal: str | None, limit: int, expiry_cutoff: datetime) -> list[JobRecord]:
    """The principal's live jobs, or every principal's (None), the most recently started first."""
    rows = await connection.fetch(
        f"SELECT {_COLUMNS} FROM jobs WHERE ($1::text IS NULL OR principal = $1) AND $2::int > 0 AND {_LIVE}"
        " ORDER BY started_at DESC, created_order DESC LIMIT $2",
        principal,
        limit,
        expiry_cutoff,
    )
    return [_record(row) for row in rows]


async def request_cancel(connection: Connection, job_id: str, principal: str) -> bool:
    """Mark the principal's running job for cancelling; False when it is not running (or not theirs)."""
    done = await connection.execute(
        "UPDATE jobs SET cancel_requested = true WHERE job_id = $1 AND principal = $2 AND status = 'running'",
        job_id,
        principal,
    )
    return bool(done == "UPDATE 1")


def _record(row: Any) -> JobRecord:
    return JobRecord(
        job_id=row["job_id"],
        principal=row["principal"],
        tool=row["tool"],
        status=row["status"],
        progress=row["progress"],
        cost_micro_usd=row["cost_micro_usd"],
        started_at=row["started_at"],
        updated_at=row["updated_at"],
        owner=row["owner"],
        cancel_requested=row["cancel_requested"],
        finished_at=row["finished_at"],
        result=row["result"],
    )
