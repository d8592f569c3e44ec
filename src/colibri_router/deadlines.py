"""The scope that holds a call to its deadline, with one timer per event loop, not per call.

A cancel scope given a deadline arms an event-loop timer when it is entered and cancels it when it
is left. On a call that lasts a millisecond, that timer (its heap entry, and the event loop reading
the clock for it on every turn while it is armed) costs about as much as all the rest of the call's
own work but the log line. Here a call's scope has no deadline of its own: it is registered with its
event loop's watcher, which keeps a timer armed for the earliest deadline of the calls in flight and,
when it fires, cancels every scope whose deadline has passed, exactly as the scope's own deadline
would have. Calls that end before their deadline leave no timer behind; a timer armed for one of
them finds nothing to cancel and arms the next earliest deadline, if any.

Off asyncio (under trio), the scope carries its deadline itself.
"""

from __future__ import annotations

import asyncio
import heapq
from types import TracebackType

import anyio

__all__ = ["DeadlineScope", "within"]


class _Watcher:
    """The deadlines of one event loop's calls in flight, and the times of its armed timers."""

    __slots__ = ("_armed", "_deadlines")

    def __init__(self) -> None:
        self._deadlines: dict[DeadlineScope, float] = {}
        self._armed: list[float] = []  # a heap: the times the armed timers fire at

    def watch(self, loop: asyncio.AbstractEventLoop, scope: DeadlineScope, at: float) -> None:
        if at <= loop.time():
            scope.cancel()  # a deadline already past cancels at once, as a scope's own does
            return
        self._deadlines[scope] = at
        if not self._armed or at < self._armed[0]:
            self._arm(loop, at)

    def forget(self, scope: DeadlineScope) -> None:
        self._deadlines.pop(scope, None)

    def _arm(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        heapq.heappush(self._armed, at)
        loop.call_at(at, self._expire, loop)

    def _expire(self, loop: asyncio.AbstractEventLoop) -> None:
        heapq.heappop(self._armed)  # timers fire in time order: this one was the earliest
        now = loop.time()
        expired = [scope for scope, at in self._deadlines.items() if at <= now]
        for scope in expired:
            del self._deadlines[scope]
            scope.cancel()
        if self._deadlines:
            earliest = min(self._deadlines.values())
            if not self._armed or earliest < self._armed[0]:
                self._arm(loop, earliest)


# One watcher per event loop. Entries of closed loops are dropped whenever a new loop registers (a
# process runs few loops, one after another); a watcher holds no reference to its loop.
_watchers: dict[asyncio.AbstractEventLoop, _Watcher] = {}


def _watcher(loop: asyncio.AbstractEventLoop) -> _Watcher:
    watcher = _watchers.get(loop)
    if watcher is None:
        for closed in [other for other in _watchers if other.is_closed()]:
            del _watchers[closed]
        watcher = _watchers[loop] = _Watcher()
    return watcher


class DeadlineScope:
    """Cancels the task it was entered in when its deadline passes, watched by its event loop's
    watcher, and stops that cancellation at its own exit, as ``asyncio.timeout`` does (it counts the
    task's cancel requests, so an outer cancellation arriving too still propagates).

    Native, not an anyio cancel scope: entering and leaving one costs anyio a task lookup and its
    scope bookkeeping each, together about a sixth of the router's own work in a call. A native
    cancellation is delivered even inside an anyio scope shielded from anyio's own, exactly as
    ``asyncio.timeout`` or ``asyncio.wait_for`` around an httpx call would be.
    """

    __slots__ = ("_at", "_cancelling", "_expired", "_loop", "_task", "_watcher", "cancelled_caught")

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        self._loop = loop
        self._at = loop.time() + seconds
        self._watcher = _watcher(loop)
        self._expired = False
        self.cancelled_caught = False

    def __enter__(self) -> DeadlineScope:
        task = asyncio.current_task(self._loop)
        if task is None:
            raise RuntimeError("a deadline scope must be entered inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._watcher.watch(self._loop, self, self._at)
        return self

    def cancel(self) -> None:
        """The deadline passed (the watcher says so): cancel the task inside the scope."""
        self._expired = True
        self._task.cancel()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> bool:
        self._watcher.forget(self)
        if not self._expired:
            return False
        # Ours is the only cancellation still requested: it ends here, and the scope says so.
        if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            self.cancelled_caught = True
            return True
        return False


def within(seconds: float) -> DeadlineScope | anyio.CancelScope:
    """A cancel scope cancelled ``seconds`` from now (at once when ``seconds`` is not positive); its
    ``cancelled_caught`` says whether the deadline cut the work short."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio
        return anyio.CancelScope(deadline=anyio.current_time() + max(seconds, 0.0))
    return DeadlineScope(loop, seconds)
