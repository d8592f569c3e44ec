"""The retry rule shared by every provider (docs/errors.md, Retries), bounded by the call's deadline.

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

from colibri_router.errors import ApiError

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


class Retries:
    """One call's retry decisions. The caller loops over its attempts and hands each failure to
    :meth:`after`, which raises when the call must not go on and otherwise waits before the next.

    The loop is the caller's, not a coroutine wrapped around each attempt: every resumption of a
    streamed answer would pass through that extra frame.
    """

    __slots__ = ("_attempts", "_deadline", "_policy", "_sleep")

    def __init__(self, policy: RetryPolicy, sleep: Sleep, deadline: Deadline | None = None) -> None:
        self._policy = policy
        self._sleep = sleep
        self._deadline = deadline
        self._attempts = 1

    async def after(self, error: ApiError) -> None:
        """``error`` ended the latest attempt: raise it (or why it is not retried), or wait."""
        if not error.retryable:
            raise error
        if self._attempts == self._policy.max_attempts:
            raise error.exhausted(self._attempts) from error
        delay = self._policy.delay_before_retry(self._attempts, error.retry_after)
        if self._deadline is not None and delay >= self._deadline.remaining():
            raise error.again(
                f"{error.message} (not retried: the next attempt could not start within the call's deadline)"
            ) from error
        await self._sleep(delay)
        self._attempts += 1
