"""with_heartbeat: a beat at once, then one every interval while the work runs, none after it; the
beat's task is started only once the first interval has passed (issue 22's per-call CPU: most calls
end sooner); nobody listening, no beat; an error comes out as itself."""

from __future__ import annotations

import anyio
import pytest

from colibri_router.errors import InvalidRequestError
from colibri_router.progress import CallProgress, with_heartbeat

pytestmark = pytest.mark.anyio


def _listened() -> tuple[CallProgress, list[tuple[float, str]]]:
    sent: list[tuple[float, str]] = []

    async def notify(count: float, message: str) -> None:
        sent.append((count, message))

    return CallProgress("kimi", notify), sent


async def _must_not_beat(interval_s: float = 0.0) -> None:
    raise AssertionError("a beat's task was started")


async def test_without_a_listener_no_beat_is_started(monkeypatch: pytest.MonkeyPatch) -> None:
    progress = CallProgress("kimi")
    monkeypatch.setattr(progress, "heartbeat", _must_not_beat)

    async def work() -> str:
        await anyio.sleep(0.03)
        return "answer"

    assert not progress.notifies
    assert await with_heartbeat(progress, work, interval_s=0.01) == "answer"


async def test_a_call_shorter_than_the_interval_sends_once_and_starts_no_task(monkeypatch: pytest.MonkeyPatch) -> None:
    progress, sent = _listened()
    monkeypatch.setattr(progress, "heartbeat", _must_not_beat)

    async def work() -> str:
        await anyio.sleep(0.05)
        return "answer"

    assert await with_heartbeat(progress, work, interval_s=10) == "answer"
    assert sent == [(1, "kimi: 0 tokens, waiting for the first token")]


async def test_a_long_call_beats_every_interval_and_stops_with_the_work() -> None:
    progress, sent = _listened()

    async def work() -> str:
        await anyio.sleep(0.25)
        return "answer"

    assert await with_heartbeat(progress, work, interval_s=0.05) == "answer"
    beats = len(sent)
    assert beats >= 3  # at once, then at 0.05 s, 0.10 s, ... (a loaded machine may lose some)
    assert [count for count, _ in sent] == list(range(1, beats + 1))
    await anyio.sleep(0.15)
    assert len(sent) == beats  # none after the work ended


@pytest.mark.parametrize("listening", [False, True])
async def test_an_error_comes_out_as_itself(listening: bool) -> None:
    progress = _listened()[0] if listening else CallProgress("kimi")

    async def work() -> str:
        await anyio.sleep(0.03)
        raise InvalidRequestError("bad model")

    with pytest.raises(InvalidRequestError, match="bad model"):
        await with_heartbeat(progress, work, interval_s=0.01)


async def test_a_beat_that_fails_fails_the_call() -> None:
    async def broken(count: float, message: str) -> None:
        if count > 1:
            raise ConnectionResetError("the host went away")

    progress = CallProgress("kimi", broken)

    async def work() -> str:
        await anyio.sleep(0.1)
        return "answer"

    with pytest.raises(ConnectionResetError):
        await with_heartbeat(progress, work, interval_s=0.01)
