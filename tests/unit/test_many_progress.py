"""router_ask_many's progress: a notification per finished call, beats while none finishes, and
progress that always increases (MCP requires it)."""

from __future__ import annotations

import anyio

from colibri_router.ask_many.progress import ManyProgress


async def test_beats_fill_the_silence_below_the_next_step_and_every_value_increases() -> None:
    sent: list[tuple[float, str, float | None]] = []

    async def notify(progress: float, message: str, total: float | None) -> None:
        sent.append((progress, message, total))

    progress = ManyProgress(notify, 3, heartbeat_s=0.05)
    waiting = ["sonnet", "gpt", "kimi"]
    async with anyio.create_task_group() as group:
        group.start_soon(progress.beat, lambda: list(waiting))
        await anyio.sleep(0.2)
        waiting.remove("kimi")
        await progress.finished("kimi answered", 0.21)
        await anyio.sleep(0.2)
        group.cancel_scope.cancel()

    values = [value for value, _, _ in sent]
    assert values == sorted(set(values))  # strictly increasing
    assert all(total == 3 for _, _, total in sent)
    beats_before = [(v, m) for v, m, _ in sent if v < 1]
    assert beats_before and all(m == "0/3 done; waiting for sonnet, gpt, kimi" for _, m in beats_before)
    assert (1, "1/3 kimi answered in 0.2 s") in [(v, m) for v, m, _ in sent]
    assert any(1 < v < 2 and m == "1/3 done; waiting for sonnet, gpt" for v, m, _ in sent)


async def test_no_beat_follows_a_notification_sooner_than_the_heartbeat() -> None:
    sent: list[str] = []

    async def notify(progress: float, message: str, total: float | None) -> None:
        sent.append(message)

    progress = ManyProgress(notify, 2, heartbeat_s=0.3)
    async with anyio.create_task_group() as group:
        group.start_soon(progress.beat, lambda: ["gpt"])
        await anyio.sleep(0.25)
        await progress.finished("sonnet answered", 0.25)
        await anyio.sleep(0.2)  # the beat at 0.3 s comes 0.05 s after the notification: skipped
        group.cancel_scope.cancel()
    assert sent == ["1/2 sonnet answered in 0.2 s"]
