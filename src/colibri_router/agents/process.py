"""One run of a command-line agent: the prompt on stdin, JSON events from stdout, stderr to the log.

The agent runs in a new session (its own process group), because it starts children of its own
(Node workers, shells, sandboxes): on cancellation, or when the deadline passes, the whole group is
stopped, SIGTERM first and SIGKILL :data:`KILL_GRACE_S` later, so nothing outlives the call.
Its stderr is logged line by line and never reaches a result: it may hold paths, tokens or the
user's environment. The last lines are kept (in memory only) for reading the failure's kind.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.text import TextReceiveStream

from colibri_router.logs import get_logger

KILL_GRACE_S = 0.5  # between SIGTERM and SIGKILL: well inside the 1 s a cancel may take
STDERR_LINES_KEPT = 40


@dataclass
class Exit:
    returncode: int | None
    stderr_tail: str  # for classifying the failure; never shown to the caller


async def run_process(
    argv: list[str],
    *,
    stdin: str,
    cwd: str,
    env: dict[str, str],
    on_line: Callable[[str], Awaitable[None]],
    label: str,
) -> Exit:
    """Run ``argv`` to its end, handing each stdout line to ``on_line``. Cancelling the caller stops
    the agent's whole process group before the cancellation goes on."""
    process = await anyio.open_process(argv, cwd=cwd, env=env, start_new_session=True)
    tail: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
    log = get_logger(__name__)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_feed, process, stdin)
            group.start_soon(_log_stderr, process.stderr, tail, label, log)
            assert process.stdout is not None
            async for line in _lines(process.stdout):
                await on_line(line)
            returncode = await process.wait()
            if _group_alive(process.pid):  # something it started is still running: not past this call
                await _stop_group(process)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await _stop_group(process)
        raise
    return Exit(returncode, "\n".join(tail))


async def _feed(process: Process, text: str) -> None:
    assert process.stdin is not None
    try:
        await process.stdin.send(text.encode())
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the agent exited before reading all of it: its exit says why
    finally:
        await process.stdin.aclose()


async def _log_stderr(stream: ByteReceiveStream | None, tail: deque[str], label: str, log: object) -> None:
    if stream is None:
        return
    async for line in _lines(stream):
        if line.strip():
            tail.append(line)
            log.info(f"[{label}] stderr", line=line)  # type: ignore[attr-defined]


async def _lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
    pending = ""
    async for chunk in TextReceiveStream(stream, errors="replace"):
        pending += chunk
        *complete, pending = pending.split("\n")
        for line in complete:
            yield line.rstrip("\r")
    if pending:
        yield pending


async def _stop_group(process: Process) -> None:
    """SIGTERM to the agent's process group, SIGKILL if anything is left after the grace time."""
    if process.returncode is not None and not _group_alive(process.pid):
        return
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE_S):
        await process.wait()
        await _group_gone(process.pid)
        return
    _signal_group(process.pid, getattr(signal, "SIGKILL", signal.SIGTERM))  # Windows has no SIGKILL
    with anyio.move_on_after(KILL_GRACE_S):
        await process.wait()


async def _group_gone(pgid: int) -> None:
    """Until no process of the group is left (the agent's own children outlive it briefly)."""
    for _ in range(int(KILL_GRACE_S / 0.02) + 1):
        if not _group_alive(pgid):
            return
        await anyio.sleep(0.02)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(pgid, sig)
        else:  # Windows has no process groups to signal: the agent itself, at least
            os.kill(pgid, signal.SIGTERM)


def _group_alive(pgid: int) -> bool:
    if not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
