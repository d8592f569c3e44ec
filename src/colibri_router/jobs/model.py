"""What ``router_job`` takes and answers, and the handle a long call answers instead of its result.

A handle is a short, non-error result a model reads without docs: the id, the status, the progress
text ("2/4 answered"), the cost so far, and one sentence saying what to do next. Every long tool's
output schema describes it beside the tool's own result and the error object."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from colibri_router.jobs.final import Background, Final
from colibri_router.store.jobs import JobStatus
from colibri_router.store.money import micro_to_usd

__all__ = ["Background", "Final", "JobHandle", "JobList", "JobSummary", "RouterJobInput"]

MAX_WAIT_S = 55.0  # under every known host's cut-off, so router_job itself is never cut
DEFAULT_WAIT_S = 30.0


class JobHandle(BaseModel):
    job_id: str
    status: JobStatus
    progress: str | None = Field(description="What has finished so far.")
    cost_usd: float = Field(description="Spent so far.")
    next: str

    @classmethod
    def of(cls, job_id: str, status: JobStatus, progress: str | None = None, cost_micro_usd: int = 0) -> JobHandle:
        """The handle of a job in this state, with the one sentence that says what to do next."""
        return cls(
            job_id=job_id,
            status=status,
            progress=progress,
            cost_usd=micro_to_usd(cost_micro_usd),
            next=f'Still running in the background: call router_job with job_id "{job_id}" to wait for its result.',
        )


class JobSummary(BaseModel):
    job_id: str
    tool: str
    status: JobStatus
    started: str = Field(description="ISO 8601, UTC.")
    cost_usd: float


class JobList(BaseModel):
    jobs: list[JobSummary] = Field(description="Your recent jobs, newest first.")


class RouterJobInput(BaseModel):
    """Arguments of ``router_job``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    job_id: str | None = Field(None, min_length=1, description="The handle's job_id; absent: list your recent jobs.")
    wait_s: float = Field(
        DEFAULT_WAIT_S, ge=0, le=MAX_WAIT_S, description="Wait up to this long for the job to end (0-55)."
    )
    cancel: bool = Field(False, description="Cancel the job (its upstream requests are closed).")
