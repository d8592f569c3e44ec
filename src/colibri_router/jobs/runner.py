"""Running a long call as a job in this process (:data:`RUNNER`).

:meth:`Runner.call` starts the call's work in a task of its own and waits: for ``background="auto"``
up to ``COLIBRI_HANDOFF_S`` seconds, for ``True`` not at all. A call that ends in time answers as
if nothing happened (no row is written); one still running is handed off: its row goes to the store
and the caller gets the handle, while the work keeps running. From then on the job's progress text
and cost are written to its row on each change (within :data:`POLL_S`), its row is renewed at least
every :data:`~.owners.HEARTBEAT_S`, and a cancel asked for through the store (another process's
``router_job``, ``colibri-router jobs --cancel``) is seen within :data:`POLL_S`. The final result
is written once, exactly as the call answered it.

A cancel (``router_job``'s, or a published one from another replica) answers ``JOB_CANCELLED``; a
job still running when the server shuts down gets :data:`SHUTDOWN_GRACE_S` to end, then answers
``SERVER_STOPPED``. The work is the tool's own service, so the ledger and budgets count a job's
calls exactly as a direct call's.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Literal, Protocol

import anyio

from colibri_router.callers import Notify
from colibri_router.errors import ColibriError
from colibri_router.jobs import owners, spending
from colibri_router.jobs.errors import JobCancelledError, ServerStoppedError
from colibri_router.jobs.memory import MemoryJobs
from colibri_router.jobs.model import Background, Final, JobHandle
from colibri_router.logs import get_logger
from colibri_router.outcomes import error_structured, error_text
from colibri_router.settings import Settings
from colibri_router.store import JobRecord, JobStatus, StoreError, shared_store
from colibri_router.store.jobs import new_job_id

POLL_S = 0.5
SHUTDOWN_GRACE_S = 30.0
CANCELLED = "the job was cancelled before it ended"
STOPPED = "the server running this job stopped before the job ended; make the call again"

Work = Callable[[Notify], Awaitable[Final]]
StopReason = Literal["cancelled", "stopped"]


class JobStore(Protocol):
    """The store's job methods (:class:`colibri_router.store.Store`), or :class:`MemoryJobs`'."""

    async def create_job(self, job: JobRecord, ttl_s: float) -> None: ...
    async def update_job(self, job_id: str, owner: str, progress: str | None, cost_micro_usd: int) -> bool | None: ...
    async def job_cancel_requested(self, job_id: str) -> bool: ...
    async def finish_job(
        self, job_id: str, owner: str | None, status: JobStatus, result: str, cost_micro_usd: int | None
    ) -> bool: ...
    async def load_job(self, job_id: str, principal: str, ttl_s: float) -> JobRecord | None: ...
    async def list_jobs(self, principal: str, limit: int, ttl_s: float) -> list[JobRecord]: ...
    async def request_job_cancel(self, job_id: str, principal: str) -> bool: ...


_MEMORY = MemoryJobs()


def job_store(settings: Settings) -> JobStore:
    """Where jobs live: the store, or this process's memory when ``COLIBRI_STORE=off``."""
    store = shared_store(settings)
    return _MEMORY if store is None else store


def error_final(error: ColibriError) -> Final:
    """The error result the tool would answer for ``error``."""
    structured = error_structured(error)
    return Final(structured=structured, text=error_text(error, structured), is_error=True)


class Job:
    """A call running in this process as a (possible) job. A call that ends before its hand-off costs
    one task and this object: the store is touched, and the recorder started, only at the hand-off."""

    def __init__(
        self,
        tool: str,
        principal: str,
        settings: Settings,
        *,
        job_id: str | None = None,
        owner: str | None = None,
    ) -> None:
        self.job_id = job_id or new_job_id()
        self.tool = tool
        self.principal = principal
        self.owner = owner or owners.this_process()
        self.started_at = datetime.now(UTC)
        self.settings = settings
        self.store: JobStore | None = None  # set at the hand-off, with the row
        self.progress: str | None = None
        self.cost_micro_usd = 0
        self.changed = False  # progress or cost not yet written to the row
        self.final: Final | None = None
        self.status: JobStatus = "running"
        self.listeners: list[Notify] = []
        self.scope = anyio.CancelScope()
        self.stop_reason: StopReason | None = None
        self.task: asyncio.Task[None] | None = None
        self.recorder: asyncio.Task[None] | None = None
        # While the row is being written: the end of the work waits for it before it writes its result.
        self.handing_off: asyncio.Future[None] | None = None

    @property
    def recorded(self) -> bool:
        """Its row is in the store: it was handed off."""
        return self.store is not None

    def handle(self) -> JobHandle:
        return JobHandle.of(self.job_id, self.status, self.progress, self.cost_micro_usd)

    def add_cost(self, micro_usd: int) -> None:
        self.cost_micro_usd += micro_usd
        self.changed = True

    async def notify(self, progress: float, message: str, total: float | None) -> None:
        """The service's progress: kept for the row and the handle, and passed to whoever listens
        (the original request until it hands off, each ``router_job`` while it waits)."""
        self.progress = message
        self.changed = True
        for listener in list(self.listeners):
            try:
                await listener(progress, message, total)
            except Exception:  # that listener's host went away; the job goes on
                if listener in self.listeners:
                    self.listeners.remove(listener)

    def stop(self, reason: StopReason) -> None:
        self.stop_reason = self.stop_reason or reason
        self.scope.cancel()

    async def ended(self, wait_s: float) -> bool:
        """Wait up to ``wait_s`` seconds for the job to end; whether it has."""
        assert self.task is not None
        if not self.task.done():
            await asyncio.wait({self.task}, timeout=wait_s)
        return self.task.done()


class Runner:
    """This process's jobs, by id."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def local(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    async def call(
        self, tool: str, principal: str, background: Background, work: Work, notify: Notify, *, settings: Settings
    ) -> Final | JobHandle:
        """Run ``work`` as a job that hands off as ``background`` says (never ``False``: the caller
        runs such a call itself): its result when it ends in time, else the handle."""
        job = Job(tool, principal, settings)
        job.listeners.append(notify)
        self._start(job, work)
        try:
            if background == "auto":
                await job.ended(settings.handoff_s)
            if job.final is None:
                await self._hand_off(job)
        except BaseException:
            # The request was cancelled, or the row could not be written: the call goes with it.
            job.stop("cancelled")
            raise
        finally:
            job.listeners.remove(notify)
        return job.final if job.final is not None else job.handle()

    async def run_recorded(self, record: JobRecord, work: Work, settings: Settings) -> Final:
        """Run ``work`` as the job whose row ``record`` is, already in the store (a detached
        ``call --background``); its final result."""
        job = Job(record.tool, record.principal, settings, job_id=record.job_id, owner=record.owner)
        job.store = job_store(settings)
        self._start(job, work)
        job.recorder = asyncio.get_running_loop().create_task(self._record(job, job.store))
        await job.ended(math.inf)
        assert job.final is not None
        return job.final

    def _start(self, job: Job, work: Work) -> None:
        self._jobs[job.job_id] = job
        # Its own task (a copy of this request's context: the caller, the MCP session, the trace),
        # so that it outlives the request that started it.
        job.task = asyncio.get_running_loop().create_task(self._run(job, work))
        self._tasks.add(job.task)
        job.task.add_done_callback(self._tasks.discard)

    async def _hand_off(self, job: Job) -> None:
        job.handing_off = asyncio.get_running_loop().create_future()
        try:
            store = job_store(job.settings)
            now = datetime.now(UTC)
            record = JobRecord(
                job_id=job.job_id,
                principal=job.principal,
                tool=job.tool,
                status="running",
                progress=job.progress,
                cost_micro_usd=job.cost_micro_usd,
                started_at=job.started_at,
                updated_at=now,
                owner=job.owner,
            )
            await store.create_job(record, job.settings.job_ttl_s)
            job.store = store
        finally:
            job.handing_off.set_result(None)
        if job.final is None:  # else it ended while its row was being written, and writes its result now
            job.recorder = asyncio.get_running_loop().create_task(self._record(job, store))
        get_logger(__name__).info("handed off", tool=job.tool, job_id=job.job_id)

    async def _run(self, job: Job, work: Work) -> None:
        spending.count_into(job.add_cost)  # this task's context: the call's ledger rows
        final: Final | None = None
        with job.scope:
            final = await work(job.notify)
        if final is None:
            error = JobCancelledError(CANCELLED) if job.stop_reason == "cancelled" else ServerStoppedError(STOPPED)
            final = error_final(error)
        job.status = (
            "cancelled"
            if job.stop_reason == "cancelled" and final.is_error
            else "failed"
            if final.is_error
            else "succeeded"
        )
        job.final = final
        if job.recorder is not None:
            job.recorder.cancel()
        with anyio.CancelScope(shield=True):
            if job.handing_off is not None:
                await job.handing_off  # its row, if it is being written
            if job.store is not None:
                await self._write_final(job, job.store)
        # Only now: until its result is stored, a reader must not take the job for one whose process is gone.
        self._jobs.pop(job.job_id, None)

    async def _write_final(self, job: Job, store: JobStore) -> None:
        assert job.final is not None
        try:
            await store.finish_job(job.job_id, job.owner, job.status, job.final.to_json(), job.cost_micro_usd)
        except StoreError as error:
            get_logger(__name__).error(
                "job result not stored", job_id=job.job_id, path=error.path, error=str(error.cause)
            )

    async def _record(self, job: Job, store: JobStore) -> None:
        """Once handed off, until the work ends: progress and cost to the row on each change, the
        row renewed, a cancel asked for through the store obeyed."""
        written = time.monotonic()
        job.changed = True  # what changed between the hand-off and now
        while True:
            await anyio.sleep(POLL_S)  # a burst of changes within it is one write
            try:
                if job.changed or time.monotonic() - written >= owners.HEARTBEAT_S:
                    job.changed = False
                    written = time.monotonic()
                    cancel = await store.update_job(job.job_id, job.owner, job.progress, job.cost_micro_usd)
                    if cancel is None:  # another process judged it stopped: its result could not be stored
                        job.stop("stopped")
                else:
                    cancel = await store.job_cancel_requested(job.job_id)
            except Exception as error:  # a database that failed for a moment must not end the job
                get_logger(__name__).warning("job progress not stored", job_id=job.job_id, error=str(error))
                continue
            if cancel:
                job.stop("cancelled")

    def cancel(self, job_id: str) -> bool:
        """Cancel the job if it runs in this process."""
        job = self._jobs.get(job_id)
        if job is None:
            return False
        job.stop("cancelled")
        return True

    async def drain(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """The server is stopping: calls not handed off end now (their host is gone); handed-off
        jobs get ``grace_s`` seconds to end, then answer ``SERVER_STOPPED``."""
        with anyio.CancelScope(shield=True):
            for job in list(self._jobs.values()):
                if not job.recorded:
                    job.stop("stopped")
            if self._tasks:
                await asyncio.wait(set(self._tasks), timeout=grace_s)
            for job in list(self._jobs.values()):
                job.stop("stopped")
            while self._tasks:
                await asyncio.wait(set(self._tasks))


RUNNER = Runner()
