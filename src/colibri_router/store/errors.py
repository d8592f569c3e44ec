"""What the store raises. Each error belongs to the router's error tree, so the router can let the
caller-facing ones through unchanged:

    ColibriError
    ├── StoreError          STORE_ERROR, kind STORE_UNAVAILABLE: the database cannot be opened, read or
    │                       written (path, cause). A call that needs it before anything is sent (a
    │                       budget reservation, a thread) fails with it; one that needs it only for
    │                       its ledger row or to store its answer is answered anyway, with a warning
    ├── BudgetExceeded      BUDGET_EXCEEDED (kind too): a budget is reached; nothing may be sent upstream
    └── InvalidRequestError
        ├── ThreadNotFound  INVALID_REQUEST: unknown, expired, or another principal's thread (one
        │                   message for all three, so a thread id reveals nothing about others)
        └── ThreadBusy      INVALID_REQUEST: another call holds the thread longer than we could wait
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypeAlias

from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.store.money import format_usd

BudgetScope: TypeAlias = Literal["daily", "monthly", "daily_per_principal", "monthly_per_principal"]

_SCOPE_PHRASES: dict[BudgetScope, tuple[str, str]] = {
    "daily": ("daily budget", "today (UTC)"),
    "monthly": ("monthly budget", "this month (UTC)"),
    "daily_per_principal": ("daily budget per caller", "today (UTC) by this caller"),
    "monthly_per_principal": ("monthly budget per caller", "this month (UTC) by this caller"),
}


class StoreError(ColibriError):
    """The database at ``path`` failed; ``cause`` is the underlying error (also ``__cause__``)."""

    code = "STORE_ERROR"
    kind = "STORE_UNAVAILABLE"

    def __init__(self, path: str, cause: BaseException, *, backend: Literal["sqlite", "postgresql"] = "sqlite") -> None:
        super().__init__(f"the colibri-router store at {path} failed: {type(cause).__name__}: {cause}")
        self.path = path
        self.cause = cause
        self.backend = backend

    @property
    def store_name(self) -> str:
        """The store as a warning names it: a team's PostgreSQL server is no local file."""
        return "the PostgreSQL database" if self.backend == "postgresql" else "the local SQLite file"


class ThreadNotFound(InvalidRequestError):
    def __init__(self, thread_id: str) -> None:
        super().__init__(f"unknown or expired thread_id {thread_id[:100]!r}")
        self.thread_id = thread_id


class ThreadBusy(InvalidRequestError):
    """Another call holds the thread: ``waited_s`` is how long this one waited for it (None when it
    did not wait: an append whose lease another call had taken over)."""

    def __init__(self, thread_id: str, waited_s: float | None) -> None:
        waited = "" if waited_s is None else f" (waited {waited_s:g} s)"
        super().__init__(
            f"thread {thread_id!r} is busy: another call is continuing it{waited}; retry when that call has finished"
        )
        self.thread_id = thread_id
        self.waited_s = waited_s


class BudgetExceeded(ColibriError):
    """A budget is reached. Amounts are micro-dollars; ``spent_micro`` counts the ledger's costs in
    the window plus the estimates reserved by calls still in flight."""

    code = "BUDGET_EXCEEDED"
    kind = "BUDGET_EXCEEDED"

    def __init__(self, scope: BudgetScope, spent_micro: int, limit_micro: int, resets_at: datetime) -> None:
        budget, window = _SCOPE_PHRASES[scope]
        super().__init__(
            f"the {budget} of {format_usd(limit_micro)} is reached: {format_usd(spent_micro)} spent or "
            f"reserved by calls in flight {window}; it resets at {resets_at.strftime('%Y-%m-%dT%H:%M:%SZ')}"
        )
        self.scope: BudgetScope = scope
        self.spent_micro = spent_micro
        self.limit_micro = limit_micro
        self.resets_at = resets_at
