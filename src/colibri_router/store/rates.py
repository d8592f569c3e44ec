"""Per-member rates (a team server's ``rpm`` and ``tpm``): the admission rule every backend applies.

Each admitted use is an event: when it happened, how many calls and how many tokens it counts. The
window is the **sliding** minute before now (not a calendar minute, so no burst at a minute's turn
gets twice the limit). A use is admitted if and only if, for each limit it counts against, what the
member's events in the window already count plus what it asks stays within the limit; the check and
the new event share one transaction per member (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: an advisory
lock on the member's name), so concurrent uses from any process are admitted as if one after another.
A refusal says how long until enough of the window's events have aged out for it to pass.

Tokens are estimated before a request is sent and settled to the real count when it answers
(:meth:`settle_rate`), so the window counts estimates only for requests still in flight.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

WINDOW_S = 60.0
RateName = Literal["rpm", "tpm"]


@dataclass(frozen=True, slots=True)
class RateEvent:
    at_s: float  # seconds on the store's clock
    calls: int
    tokens: int


@dataclass(frozen=True, slots=True)
class RateLimits:
    rpm: int | None = None
    tpm: int | None = None


@dataclass(frozen=True, slots=True)
class RateRefusal:
    """Which limit refused, what the window held, and how long until the use would pass."""

    limit: RateName
    used: int
    allowed: int
    retry_after_s: float


def new_event_id() -> str:
    return "rt_" + secrets.token_urlsafe(15)


def fits(used_calls: int, used_tokens: int, limits: RateLimits, *, calls: int, tokens: int) -> bool:
    """The rule on the window's totals alone: what a backend asks first, reading the window's events
    (for :func:`admission`'s refusal and its wait) only when the use does not fit. PostgreSQL's
    ``colibri_take_rate`` (its schema) applies the same condition in the database."""
    return (limits.rpm is None or calls <= 0 or used_calls + calls <= limits.rpm) and (
        limits.tpm is None or tokens <= 0 or used_tokens + tokens <= limits.tpm
    )


def admission(
    events: Iterable[RateEvent], now_s: float, limits: RateLimits, *, calls: int, tokens: int
) -> RateRefusal | None:
    """The rule (module docstring) for a use counting ``calls`` and ``tokens``: None admits it. When
    both limits refuse, the refusal is the one that frees last (waiting for it is enough for both)."""
    live = sorted((event for event in events if event.at_s > now_s - WINDOW_S), key=lambda event: event.at_s)
    checks: list[tuple[RateName, int | None, int, list[int]]] = [
        ("rpm", limits.rpm, calls, [event.calls for event in live]),
        ("tpm", limits.tpm, tokens, [event.tokens for event in live]),
    ]
    refusals: list[RateRefusal] = []
    for name, limit, wanted, counts in checks:
        if limit is None or wanted <= 0:
            continue
        used = sum(counts)
        if used + wanted <= limit:
            continue
        freed = 0
        wait = WINDOW_S
        for event, count in zip(live, counts, strict=True):
            freed += count
            if used - freed + wanted <= limit:
                wait = min(event.at_s + WINDOW_S - now_s, WINDOW_S)
                break
        refusals.append(RateRefusal(name, used, limit, wait))
    return max(refusals, key=lambda refusal: refusal.retry_after_s, default=None)
