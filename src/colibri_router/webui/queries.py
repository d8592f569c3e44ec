"""What the pages show, read from the ledger through the :class:`~colibri_router.store.Store`: spend
per day in a window, yesterday's spend, members' usage against their budgets. ``visible`` is whose
calls the viewer may see: None for an administrator (everyone's), else the member's own name."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from colibri_router.store import DaySpend, SpendBy, Store
from colibri_router.store.utc_windows import day_start, month_start

WINDOWS_DAYS = (7, 30, 90)


@dataclass(frozen=True, slots=True)
class Series:
    """Spend per day over a window, split by member or model: ``days`` in order (every day of the
    window, with or without calls), ``keys`` by total cost (highest first, then name), and the cost
    of each (day, key) in micro-dollars."""

    by: SpendBy
    days: tuple[str, ...]
    keys: tuple[str, ...]
    cost: dict[tuple[str, str], int]
    calls: dict[str, int]
    errors: dict[str, int]

    def total(self, key: str) -> int:
        return sum(cost for (_, each), cost in self.cost.items() if each == key)

    def day_total(self, day: str) -> int:
        return sum(cost for (each, _), cost in self.cost.items() if each == day)


def window_days(now: datetime, days: int) -> tuple[datetime, tuple[str, ...]]:
    """The window's first instant (00:00 UTC ``days - 1`` days ago) and its days as ``YYYY-MM-DD``."""
    first = day_start(now) - timedelta(days=days - 1)
    return first, tuple((first + timedelta(days=offset)).strftime("%Y-%m-%d") for offset in range(days))


def build_series(by: SpendBy, days: tuple[str, ...], rows: list[DaySpend]) -> Series:
    cost: dict[tuple[str, str], int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)
    errors: dict[str, int] = defaultdict(int)
    for row in rows:
        cost[(row.day, row.key)] += row.cost_micro_usd
        calls[row.key] += row.calls
        errors[row.key] += row.errors
    totals: dict[str, int] = defaultdict(int)
    for (_, key), value in cost.items():
        totals[key] += value
    keys = tuple(sorted(calls, key=lambda key: (-totals[key], key)))
    return Series(by, days, keys, dict(cost), dict(calls), dict(errors))


async def spend_series(store: Store, visible: str | None, now: datetime, days: int, by: SpendBy) -> Series:
    first, window = window_days(now, days)
    return build_series(by, window, await store.spend_by_day(visible, first, by))


def yesterday(now: datetime) -> str:
    return (day_start(now) - timedelta(days=1)).strftime("%Y-%m-%d")


@dataclass(frozen=True, slots=True)
class MemberUsage:
    """A member's calls and cost today and this month (UTC), in micro-dollars."""

    name: str
    calls_today: int
    errors_today: int
    cost_today: int
    cost_month: int


async def members_usage(store: Store, visible: str | None, now: datetime) -> dict[str, MemberUsage]:
    """This month's usage of every member who has calls in it (only ``visible``'s for a member)."""
    today = date.isoformat(day_start(now).date())
    rows = await store.spend_by_day(visible, month_start(now), "principal")
    calls: dict[str, int] = defaultdict(int)
    errors: dict[str, int] = defaultdict(int)
    cost_today: dict[str, int] = defaultdict(int)
    cost_month: dict[str, int] = defaultdict(int)
    for row in rows:
        cost_month[row.key] += row.cost_micro_usd
        if row.day == today:
            calls[row.key] += row.calls
            errors[row.key] += row.errors
            cost_today[row.key] += row.cost_micro_usd
    return {
        name: MemberUsage(name, calls[name], errors[name], cost_today[name], cost_month[name]) for name in cost_month
    }
