"""The jobs of a process whose store is off (``COLIBRI_STORE=off``): the same methods as the store's,
on a dictionary that lives as long as the process. Nothing is shared with other processes, so
``colibri-router jobs`` and other servers cannot see these jobs."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from colibri_router.store.jobs import JobRecord, JobStatus, expiry_cutoff
from colibri_router.store.utc_windows import Clock, utc_now


class MemoryJobs:
    def __init__(self, clock: Clock = utc_now) -> None:
        self._jobs: dict[str, JobRecord] = {}
        self._clock = clock

    @property
    def location(self) -> str:
        return "memory"

    async def create_job(self, job: JobRecord, ttl_s: float) -> None:
        self._purge(ttl_s)
        self._jobs[job.job_id] = job

    async def update_job(self, job_id: str, owner: str, progress: str | None, cost_micro_usd: int) -> bool | None:
        job = self._jobs.get(job_id)
        if job is None or job.owner != owner or job.status != "running":
            return None
        self._jobs[job_id] = dataclasses.replace(
            job, progress=progress, cost_micro_usd=cost_micro_usd, updated_at=self._clock()
        )
        return job.cancel_requested

    async def job_cancel_requested(self, job_id: str) -> bool:
        job = self._jobs.get(job_id)
        return job is not None and job.cancel_requested

    async def finish_job(
        self, job_id: str, owner: str | None, status: JobStatus, result: str, cost_micro_usd: int | None
    ) -> bool:
        job = self._jobs.get(job_id)
        if job is None or job.status != "running" or (owner is not None and job.owner != owner):
            return False
        now = self._clock()
        cost = job.cost_micro_usd if cost_micro_usd is None else cost_micro_usd
        self._jobs[job_id] = dataclasses.replace(
            job, status=status, result=result, cost_micro_usd=cost, finished_at=now, updated_at=now
        )
        return True

    async def load_job(self, job_id: str, principal: str, ttl_s: float) -> JobRecord | None:
        job = self._jobs.get(job_id)
        if job is None or job.principal != principal or self._expired(job, ttl_s):
            return None
        return job

    async def list_jobs(self, principal: str, limit: int, ttl_s: float) -> list[JobRecord]:
        mine = [job for job in self._jobs.values() if job.principal == principal and not self._expired(job, ttl_s)]
        # Newest first; among jobs started at the same instant, the later created (dicts keep order).
        order = {job_id: position for position, job_id in enumerate(self._jobs)}
        mine.sort(key=lambda job: (job.started_at, order[job.job_id]), reverse=True)
        return mine[:limit]

    async def request_job_cancel(self, job_id: str, principal: str) -> bool:
        job = self._jobs.get(job_id)
        if job is None or job.principal != principal or job.status != "running":
            return False
        self._jobs[job_id] = dataclasses.replace(job, cancel_requested=True)
        return True

    def _expired(self, job: JobRecord, ttl_s: float) -> bool:
        cutoff: datetime = expiry_cutoff(self._clock(), ttl_s)
        return job.finished_at is not None and job.finished_at <= cutoff

    def _purge(self, ttl_s: float) -> None:
        for job_id in [job_id for job_id, job in self._jobs.items() if self._expired(job, ttl_s)]:
            del self._jobs[job_id]
