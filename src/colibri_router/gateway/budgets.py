"""A team member's ``daily_usd`` and ``monthly_usd`` as the store's per-caller budgets, applied by the
accounting (:mod:`colibri_router.accounting`) where it reads the budget limits. Here, not in
:mod:`.enforce`, because it needs the store, which the router does not load."""

from __future__ import annotations

from dataclasses import replace

from colibri_router.gateway.member import current_member
from colibri_router.store import BudgetLimits, usd_to_micro


def member_budgets(limits: BudgetLimits) -> BudgetLimits:
    """``limits`` with the running member's ``daily_usd`` and ``monthly_usd`` as per-caller budgets
    (the smaller of theirs and ``COLIBRI_BUDGET_DAILY_USD_PER_USER`` per day)."""
    member = current_member()
    if member is None or (member.rules.daily_usd is None and member.rules.monthly_usd is None):
        return limits
    daily, monthly = member.rules.daily_usd, member.rules.monthly_usd
    per_day = limits.daily_per_principal_micro_usd
    if daily is not None:
        per_day = usd_to_micro(daily) if per_day is None else min(per_day, usd_to_micro(daily))
    return replace(
        limits,
        daily_per_principal_micro_usd=per_day,
        monthly_per_principal_micro_usd=None if monthly is None else usd_to_micro(monthly),
    )
