"""router_ask_many's progress: one notification per finished call (``"2/4 gemini-pro answered in
3.1 s"``), and while none finishes, a beat every few seconds, because hosts drop a call after about
60 s without progress (a thinking model can be quiet for minutes).

MCP wants progress to increase with every notification: finished calls count whole steps (``total``
is the number of calls), beats take fractions below the next step (1/2, 2/3, 3/4... of it).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio

from colibri_router.progress import HEARTBEAT_S

# progress, message, total: what an MCP progress notification carries.
Notify = Callable[[float, str, float | None], Awaitable[None]]


class ManyProgress:
    def __init__(self, notify: Notify | None, total: int, heartbeat_s: float = HEARTBEAT_S) -> None:
        self._notify = notify
        self._total = total
        self._heartbeat_s = heartbeat_s
        self._done = 0
        self._beats = 0
        self._last = time.monotonic()
        self._lock = anyio.Lock()

    async def finished(self, what: str, seconds: float) -> None:
        """A call ended: ``what`` says whose and how (``"gpt failed (RATE_LIMITED)"``)."""
        async with self._lock:
            self._done += 1
            self._beats = 0
            await self._send(self._done, f"{self._done}/{self._total} {what} in {seconds:.1f} s")

    async def beat(self, waiting: Callable[[], list[str]]) -> None:
        """Until cancelled: after every quiet ``heartbeat_s``, say who is still awaited."""
        while True:
            await anyio.sleep(self._heartbeat_s)
            async with self._lock:
                if time.monotonic() - self._last < self._heartbeat_s:
                    continue
                self._beats += 1
                names = waiting()
                what = f"waiting for {', '.join(names)}" if names else "waiting for the judge"
                step = self._done + self._beats / (self._beats + 1)
                await self._send(step, f"{self._done}/{self._total} done; {what}")

    async def _send(self, progress: float, message: str) -> None:
        self._last = time.monotonic()
        if self._notify is not None:
            await self._notify(progress, message, self._total)
