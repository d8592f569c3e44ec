"""What a running call reports while it streams: first token, output so far, the block in progress.

The transport updates a :class:`CallProgress`; whoever wants notifications (the MCP server, for
hosts that asked for progress) passes ``notify``. Hosts drop a tool call after about 60 s without
progress, so :meth:`CallProgress.heartbeat` re-sends the current state on a fixed beat even while
the upstream is silent (a thinking model can be quiet for minutes).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")
Notify = Callable[[float, str], Awaitable[None]]
HEARTBEAT_S = 4.0


class CallProgress:
    def __init__(self, provider: str, notify: Notify | None = None, clock: Callable[[], float] = time.monotonic):
        self.provider = provider
        self._notify = notify
        self._clock = clock
        self.started_at = clock()
        self.first_token_at: float | None = None
        self.output_chars = 0
        self.current_block: str | None = None
        self.current_step: str | None = None  # what an agent is doing (``reading src/app.py``)
        self._sent = 0

    def mark_first_token(self) -> None:
        if self.first_token_at is None:
            self.first_token_at = self._clock()

    @property
    def ttft_ms(self) -> int | None:
        if self.first_token_at is None:
            return None
        return round((self.first_token_at - self.started_at) * 1000)

    def message(self) -> str:
        if self.current_step is not None:
            return f"{self.provider}: {self.current_step}"
        tokens = self.output_chars // 4  # the usual ~4 characters per token; an estimate for humans
        amount = f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
        state = self.current_block or ("waiting for the first token" if self.first_token_at is None else None)
        return f"{self.provider}: {amount} tokens" + (f", {state}" if state else "")

    @property
    def notifies(self) -> bool:
        """Whether anyone listens: without a listener a heartbeat has nothing to send."""
        return self._notify is not None

    async def step(self, label: str) -> None:
        """An agent's step: the notification says what it is doing rather than a token count."""
        self.current_step = label
        await self.send()

    async def block(self, label: str) -> None:
        self.current_block = label
        await self.send()

    async def send(self) -> None:
        if self._notify is not None:
            # MCP requires progress to increase with every notification; a counter always does.
            self._sent += 1
            await self._notify(self._sent, self.message())

    async def heartbeat(self, interval_s: float = HEARTBEAT_S) -> None:
        """Send now, then every ``interval_s`` until cancelled."""
        while True:
            await self.send()
            await anyio.sleep(interval_s)


async def with_heartbeat(
    progress: CallProgress, work: Callable[[], Awaitable[T]], interval_s: float = HEARTBEAT_S
) -> T:
    """Run ``work`` while ``progress`` beats: a notification at once, then every ``interval_s``.
    Its exception comes out as itself (never wrapped in an ExceptionGroup, which callers branching on
    error codes must not see).

    The beat's task starts only when the first interval has passed: most calls end sooner, and a
    task group with a task to spawn and cancel on every call cost more than the rest of the call's
    own bookkeeping. A timer stands in until then. Nobody listening: no beat at all."""
    if not progress.notifies:
        return await work()
    await progress.send()
    loop = asyncio.get_running_loop()
    beats: asyncio.Task[None] | None = None

    def start_beating() -> None:
        nonlocal beats
        beats = loop.create_task(progress.heartbeat(interval_s))

    timer = loop.call_later(interval_s, start_beating)
    try:
        result = await work()
    finally:
        timer.cancel()
        failure = await _stopped(beats) if beats is not None else None
    if failure is not None:
        raise failure  # the host's stream broke while beating: as when the beat shared a task group
    return result


async def _stopped(beats: asyncio.Task[None]) -> BaseException | None:
    """Cancel the beat and wait for it (a notification half sent is abandoned before the call answers);
    what it failed with, if it failed on its own."""
    beats.cancel()
    await asyncio.wait([beats])
    return None if beats.cancelled() else beats.exception()
