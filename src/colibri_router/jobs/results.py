"""What ``router_job`` answers, for its output schema: a running job's handle, the caller's jobs, or a
finished job's result, which is its own tool's (router_call's, router_ask_many's or router_run's)."""

from __future__ import annotations

from typing import TypeAlias

from colibri_router.ask_many.schema import RouterAskManyResult
from colibri_router.jobs.model import JobHandle, JobList
from colibri_router.schema import RouterCallResult
from colibri_router.testing.report import Report

JobResult: TypeAlias = JobHandle | JobList | RouterCallResult | RouterAskManyResult | Report
