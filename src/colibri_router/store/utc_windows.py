"""Calendar windows in UTC: budgets reset at 00:00 UTC and on the first of the month, usage reports
count whole UTC days. One definition here, so every backend draws the same lines.

``since`` windows (for usage reports) are calendar days that include today:
``"today"`` starts at today's 00:00 UTC, ``"7d"`` at 00:00 UTC six days earlier (7 days counting
today), ``"30d"`` at 00:00 UTC 29 days earlier, and ``"all"`` has no start.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Literal, TypeAlias

Since: TypeAlias = Literal["today", "7d", "30d", "all"]
Clock: TypeAlias = Callable[[], datetime]
"""Returns the current time as a timezone-aware datetime; injected in tests."""

_DAYS_IN_WINDOW: dict[Since, int] = {"today": 1, "7d": 7, "30d": 30}


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is refused, since its zone would be a guess."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"a stored time must be timezone-aware, got naive {moment.isoformat()}")
    return moment.astimezone(UTC)


def day_start(now: datetime) -> datetime:
    return as_utc(now).replace(hour=0, minute=0, second=0, microsecond=0)


def next_day_start(now: datetime) -> datetime:
    return day_start(now) + timedelta(days=1)


def month_start(now: datetime) -> datetime:
    return day_start(now).replace(day=1)


def next_month_start(now: datetime) -> datetime:
    start = month_start(now)
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)


def window_start(since: Since, now: datetime) -> datetime | None:
    """Where a ``since`` window begins (see the module docstring); None for ``"all"``."""
    if since == "all":
        return None
    if since not in _DAYS_IN_WINDOW:
        raise ValueError(f"since must be one of today, 7d, 30d, all; got {since!r}")
    return day_start(now) - timedelta(days=_DAYS_IN_WINDOW[since] - 1)
