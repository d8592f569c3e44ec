"""Budgets: the admission rule every backend applies, and the records it works with.

**The admission rule.** For each configured scope, the *committed spend* is

- the ledger's cost in the scope's current UTC window (today from 00:00 UTC, or this month from the
  1st at 00:00 UTC; for the per-caller scope, only that caller's rows), plus
- the estimates of all reservations that have not expired (only the caller's, for the per-caller
  scope): calls admitted earlier and still in flight.

A call is admitted if and only if the committed spend is **below** the limit in every configured
scope. An admitted call reserves its worst-case estimate, in the same transaction as the check,
until ``settle`` writes its ledger row with the real cost and drops the reservation (one
transaction again). So:

1. once the committed spend has reached a limit (``spent >= limit``), every call is refused;
2. concurrent admissions behave as if they had come one after another: from zero spend, N calls
   with estimate ``e`` under a limit ``L`` admit exactly ``min(N, ceil(L / e))`` of them: those
   that find the committed spend still below ``L``;
3. the committed spend overshoots a limit by less than one call's estimate (so does the real
   spend when estimates are worst cases): the last call admitted found room, not necessarily
   enough room, which is what "fails when the spend has reached the budget" means;
4. an estimate of 0 (a model without a price) reserves nothing and is admitted while the spend is
   below every limit;
5. a reservation left by a process that died stops counting when it expires.

When several scopes are reached, the error names the one that resets last (monthly before daily,
the total before the per-caller limit of the same window): that is when the call could next pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from colibri_router.store.errors import BudgetExceeded, BudgetScope
from colibri_router.store.money import usd_to_micro
from colibri_router.store.utc_windows import next_day_start, next_month_start


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Optional limits in micro-dollars; None means no limit in that scope."""

    daily_micro_usd: int | None = None
    monthly_micro_usd: int | None = None
    daily_per_principal_micro_usd: int | None = None
    # A team server's per-member monthly budget (its policy file's monthly_usd).
    monthly_per_principal_micro_usd: int | None = None

    def __post_init__(self) -> None:
        for scope, limit in self.by_scope():
            if limit < 0:
                raise ValueError(f"the {scope} budget cannot be negative")

    @classmethod
    def from_usd(
        cls,
        *,
        daily: float | Decimal | None = None,
        monthly: float | Decimal | None = None,
        daily_per_principal: float | Decimal | None = None,
    ) -> BudgetLimits:
        """Limits from dollar amounts (``COLIBRI_BUDGET_*_USD``), converted by ``usd_to_micro``."""
        return cls(
            daily_micro_usd=None if daily is None else usd_to_micro(daily),
            monthly_micro_usd=None if monthly is None else usd_to_micro(monthly),
            daily_per_principal_micro_usd=None if daily_per_principal is None else usd_to_micro(daily_per_principal),
        )

    def by_scope(self) -> list[tuple[BudgetScope, int]]:
        """The configured limits, in the order the admission rule reports them."""
        limits: list[tuple[BudgetScope, int | None]] = [
            ("monthly", self.monthly_micro_usd),
            ("monthly_per_principal", self.monthly_per_principal_micro_usd),
            ("daily", self.daily_micro_usd),
            ("daily_per_principal", self.daily_per_principal_micro_usd),
        ]
        return [(scope, limit) for scope, limit in limits if limit is not None]


@dataclass(frozen=True, slots=True)
class Reservation:
    """Budget held by one admitted call until ``settle``; ignored by the rule once ``expires_at``
    has passed (the call's process may have died)."""

    reservation_id: str
    principal: str
    estimate_micro_usd: int
    created_at: datetime
    expires_at: datetime


def check_admission(limits: BudgetLimits, committed_spend: Callable[[BudgetScope], int], now: datetime) -> None:
    """Apply the admission rule (module docstring). ``committed_spend(scope)`` is asked only for the
    configured scopes, so a backend runs no query for a limit nobody set.

    Raises :class:`BudgetExceeded` for the first reached scope in :meth:`BudgetLimits.by_scope` order."""
    for scope, limit in limits.by_scope():
        spent = committed_spend(scope)
        if spent >= limit:
            resets_at = next_month_start(now) if scope.startswith("monthly") else next_day_start(now)
            raise BudgetExceeded(scope, spent, limit, resets_at)
