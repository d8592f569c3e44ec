"""The retry loop shared by every provider (contract §6), bounded by the call's deadline.

At most ``max_attempts`` attempts; before retry *n* it sleeps ``base_delay_s * 2**(n-1)`` (0.1, 0.2,
0.4 s), or longer when the upstream's ``Retry-After`` asks for it (capped). Only errors marked
``retryable`` are retried: 429 and 5xx. A retry that could not start before the deadline is not
attempted; the last error is reported instead.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from colibri_router.errors import ApiError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 4
    base_delay_s: float = 0.1
    max_retry_after_s: float = 30.0

    def delay_before_retry(self, retry_number: int, retry_after_s: float | None) -> float:
        backoff = self.base_delay_s * 2.0 ** (retry_number - 1)
        if retry_after_s is None:
            return backoff
        return max(backoff, min(retry_after_s, self.max_retry_after_s))


@dataclass(frozen=True, slots=True)
class Deadline:
    """A point on the monotonic clock by which the whole call must be done."""

    at: float
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    def remaining(self) -> float:
        return self.at - self.clock()


def parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    sleep: Sleep,
    deadline: Deadline | None = None,
) -> T:
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt()
        except ApiError as error:
            if not error.retryable:
                raise
            if attempts == policy.max_attempts:
                raise error.exhausted(attempts) from error
            delay = policy.delay_before_retry(attempts, error.retry_after)
            if deadline is not None and delay >= deadline.remaining():
                raise error.again(
                    f"{error.message} (not retried: the next attempt could not start within the call's deadline)"
                ) from error
            await sleep(delay)
