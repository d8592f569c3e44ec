"""Reading the ledger back, for the team server's pages (:mod:`colibri_router.webui`): one call's row
by its id, recent calls under filters, and spend per UTC day per member or per model. Records and
checks shared by both backends; each backend writes its own SQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeAlias

from colibri_router.store.records import LedgerRow
from colibri_router.store.utc_windows import as_utc

SpendBy: TypeAlias = Literal["principal", "model"]
"""What a spend-per-day series is split by: the member (the ledger's principal) or the model."""

OUTCOME_OK = "ok"
OUTCOME_ERROR = "error"
MAX_CALLS_LISTED = 500


@dataclass(frozen=True, slots=True)
class StoredCall:
    """One ledger row and the id the database gave it (ids grow with insertion)."""

    call_id: int
    row: LedgerRow


@dataclass(frozen=True, slots=True, kw_only=True)
class CallQuery:
    """Filters over the ledger; None leaves a filter out. ``outcome`` is ``"ok"``, ``"error"`` (any
    failure) or an error kind (``TIMEOUT``...). ``since`` is inclusive, ``until`` exclusive.
    ``before_id`` pages back: only calls with a smaller id. Newest first, at most ``limit``."""

    principal: str | None = None
    model: str | None = None
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before_id: int | None = None
    limit: int = 50

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_CALLS_LISTED:
            raise ValueError(f"limit must be between 1 and {MAX_CALLS_LISTED}, got {self.limit}")
        for name in ("since", "until"):
            moment = getattr(self, name)
            if moment is not None:
                object.__setattr__(self, name, as_utc(moment))

    @property
    def kind(self) -> str | None:
        """The error kind asked for, when ``outcome`` names one."""
        return None if self.outcome in (None, OUTCOME_OK, OUTCOME_ERROR) else self.outcome


@dataclass(frozen=True, slots=True)
class DaySpend:
    """One member's or model's calls and cost on one UTC day (``YYYY-MM-DD``); ``cost_micro_usd``
    sums the priced calls only."""

    day: str
    key: str
    calls: int
    errors: int
    cost_micro_usd: int


def require_spend_by(by: str) -> None:
    if by not in ("principal", "model"):
        raise ValueError(f"spend is split by 'principal' or 'model', got {by!r}")
