"""Cost so far, for a job's progress: every ledger row a service writes (:mod:`colibri_router.accounting`)
passes its cost here, and the job running the call (a context variable, so every task the call
starts counts too) adds it up. Outside a job nothing is counted."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar

_SINK: ContextVar[Callable[[int], None] | None] = ContextVar("colibri_job_spending", default=None)


def count_into(sink: Callable[[int], None]) -> None:
    """From now on in this context (a job's task), each row's cost in micro-dollars goes to ``sink``."""
    _SINK.set(sink)


def spent(costs_micro_usd: Iterable[int | None]) -> None:
    """Ledger rows were written with these costs (None: unpriced)."""
    sink = _SINK.get()
    if sink is not None:
        sink(sum(cost or 0 for cost in costs_micro_usd))
