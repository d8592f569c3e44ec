"""A job's row, as every backend stores it (see :mod:`colibri_router.jobs`): who started it, which
tool, its status, the progress text and cost so far, the process running it (``owner``, renewed
with ``updated_at`` while it runs), whether a cancel was asked for, and once it ended, its result
as the exact JSON the call would have answered.

The rules shared by the backends live here: the id format, and which rows have expired."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

JobStatus = Literal["running", "succeeded", "failed", "cancelled"]
DEFAULT_JOB_LIST_LIMIT = 20


@dataclass(frozen=True, slots=True)
class JobRecord:
    job_id: str
    principal: str
    tool: str
    status: JobStatus
    progress: str | None
    cost_micro_usd: int
    started_at: datetime
    updated_at: datetime
    owner: str  # "host:pid" of the process running it
    cancel_requested: bool = False
    finished_at: datetime | None = None
    result: str | None = None  # JSON: {"structured": ..., "text": ..., "is_error": ...}


def new_job_id() -> str:
    """``job_`` and 20 random URL-safe characters (120 bits: unguessable, like a thread id)."""
    return "job_" + secrets.token_urlsafe(15)


def expiry_cutoff(now: datetime, ttl_s: float) -> datetime:
    """Jobs that ended at or before this instant are gone."""
    return now - timedelta(seconds=ttl_s)
