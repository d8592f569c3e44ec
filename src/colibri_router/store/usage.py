"""Turning per-group ledger sums into a report: the order of groups and the overall total, the same
for every backend (a backend only has to produce the sums)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from colibri_router.store.records import GroupBy, UsageReport, UsageTotals
from colibri_router.store.utc_windows import Since


def build_report(
    since: Since, by: GroupBy | None, starts_at: datetime | None, groups: Iterable[UsageTotals]
) -> UsageReport:
    """``groups`` as a backend summed them (one group with key None when ``by`` is None)."""
    summed = list(groups)
    total = _combined(summed)
    if by is None:
        return UsageReport(since, by, starts_at, (), total)
    if by == "day":
        summed.sort(key=lambda group: group.key or "")
    else:
        summed.sort(key=lambda group: (-group.cost_micro_usd, group.key or ""))
    return UsageReport(since, by, starts_at, tuple(summed), total)


def _combined(groups: list[UsageTotals]) -> UsageTotals:
    return UsageTotals(
        key=None,
        calls=sum(group.calls for group in groups),
        errors=sum(group.errors for group in groups),
        input_tokens=sum(group.input_tokens for group in groups),
        output_tokens=sum(group.output_tokens for group in groups),
        cached_tokens=sum(group.cached_tokens for group in groups),
        cost_micro_usd=sum(group.cost_micro_usd for group in groups),
        unpriced_calls=sum(group.unpriced_calls for group in groups),
    )
