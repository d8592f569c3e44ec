"""``router_job`` (and ``colibri-router jobs``): wait for a job, cancel it, or list the caller's jobs,
from any process on the same store.

A job running in this process is awaited directly, its progress passed on as it comes; one running
elsewhere (another replica, a detached ``call --background``) is read from the store every
:data:`~.runner.POLL_S`. A cancel is written to the job's row (its process sees it within
``POLL_S``) and, where the store carries cancels between processes (PostgreSQL), published at once.
A job whose process is gone (see :mod:`.owners`) is ended here as ``SERVER_STOPPED``, so it never
reads as running forever. Another principal's job is answered exactly as an unknown id.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import anyio

from colibri_router.callers import Notify, ToolCall
from colibri_router.jobs import owners
from colibri_router.jobs.errors import JobNotFoundError, ServerStoppedError
from colibri_router.jobs.model import Final, JobHandle, JobList, JobSummary, RouterJobInput
from colibri_router.jobs.runner import POLL_S, RUNNER, STOPPED, JobStore, error_final, job_store
from colibri_router.settings import Settings, load_settings
from colibri_router.store import CancelBroadcast, JobRecord, micro_to_usd
from colibri_router.store.jobs import DEFAULT_JOB_LIST_LIMIT

CANCEL_PREFIX = "job:"


def cancel_key(job_id: str) -> str:
    """What a cancel of ``job_id`` is published as between processes (distinct from a request's key)."""
    return CANCEL_PREFIX + job_id


def cancel_published(key: str) -> bool:
    """A published cancel reached this process: cancel the job if it runs here."""
    return key.startswith(CANCEL_PREFIX) and RUNNER.cancel(key.removeprefix(CANCEL_PREFIX))


async def for_tool(args: RouterJobInput, call: ToolCall) -> JobHandle | JobList | Final:
    """router_job, as the tool table (:mod:`colibri_router.server.table`) calls it."""
    settings = load_settings()
    if args.job_id is None:
        return await listing(job_store(settings), call.caller.name, settings)
    return await follow(
        args.job_id, call.caller.name, call.notify, wait_s=args.wait_s, cancel=args.cancel, settings=settings
    )


async def follow(
    job_id: str, principal: str, notify: Notify, *, wait_s: float, cancel: bool, settings: Settings
) -> JobHandle | Final:
    """The job's result once it ends (within ``wait_s``), else its handle; ``cancel`` first cancels it."""
    store = job_store(settings)
    record = await _current(store, job_id, principal, settings)
    if cancel and record.status == "running":
        await store.request_job_cancel(record.job_id, principal)
        if not RUNNER.cancel(record.job_id) and isinstance(store, CancelBroadcast):
            await store.publish_cancel(cancel_key(record.job_id))
    local = RUNNER.local(record.job_id)
    if record.status == "running" and local is not None:
        local.listeners.append(notify)
        try:
            await local.ended(wait_s)
        finally:
            local.listeners.remove(notify)
        return local.final if local.final is not None else local.handle()
    return await _poll(store, record, principal, notify, wait_s=wait_s, settings=settings)


async def _poll(
    store: JobStore, record: JobRecord, principal: str, notify: Notify, *, wait_s: float, settings: Settings
) -> JobHandle | Final:
    """A job of another process (or ended): read again until it ends or ``wait_s`` passes."""
    ends = time.monotonic() + wait_s
    told: str | None = None
    sent = 0
    while record.status == "running":
        if record.progress is not None and record.progress != told:
            told, sent = record.progress, sent + 1
            await notify(sent, record.progress, None)
        remaining = ends - time.monotonic()
        if remaining <= 0:
            return _handle(record)
        await anyio.sleep(min(POLL_S, remaining))
        record = await _current(store, record.job_id, principal, settings)
    assert record.result is not None, "an ended job has its result"
    return Final.from_json(record.result)


async def _current(store: JobStore, job_id: str, principal: str, settings: Settings) -> JobRecord:
    """The principal's job as it stands, a job whose process is gone ended as stopped."""
    record = await store.load_job(job_id, principal, settings.job_ttl_s)
    if record is None:
        raise JobNotFoundError(
            f"no job {job_id!r} of yours: unknown, or it ended over {settings.job_ttl_s:g} s ago (COLIBRI_JOB_TTL_S)"
        )
    return await settled(store, record, settings)


async def settled(store: JobStore, record: JobRecord, settings: Settings) -> JobRecord:
    """The job as it stands: a running one whose process is gone is ended as stopped first (also
    what the /ui jobs page shows)."""
    if record.status != "running":
        return record
    here = RUNNER.local(record.job_id) is not None
    if not owners.gone(record.owner, record.updated_at, datetime.now(UTC), running_here=here):
        return record
    stopped = error_final(ServerStoppedError(STOPPED)).to_json()
    await store.finish_job(record.job_id, record.owner, "failed", stopped, None)
    again = await store.load_job(record.job_id, record.principal, settings.job_ttl_s)
    return again if again is not None else record


async def listing(store: JobStore, principal: str, settings: Settings) -> JobList:
    records = await store.list_jobs(principal, DEFAULT_JOB_LIST_LIMIT, settings.job_ttl_s)
    current = [await settled(store, record, settings) for record in records]
    return JobList(
        jobs=[
            JobSummary(
                job_id=record.job_id,
                tool=record.tool,
                status=record.status,
                started=record.started_at.astimezone(UTC).isoformat(timespec="seconds"),
                cost_usd=micro_to_usd(record.cost_micro_usd),
            )
            for record in current
        ]
    )


def _handle(record: JobRecord) -> JobHandle:
    return JobHandle.of(record.job_id, record.status, record.progress, record.cost_micro_usd)
