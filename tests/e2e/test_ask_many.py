"""router_ask_many through the real process: progress per model over stdio with the official client,
a cancel that closes every upstream request, and the ``ask-many`` command."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from fake_upstream import Disconnect, FakeUpstream, anthropic_text, error, kimi_text, openai_text
from harness import SERVER_COMMAND, every_provider_env, router_session

pytestmark = pytest.mark.e2e

SONNET, GPT, KIMI = "claude-sonnet-4-5", "gpt-4.1", "kimi-k2.6"


async def test_one_progress_notification_per_model_and_the_answers_in_order(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("from sonnet", delay_s=0.9))
    fake_upstream.route("openai").enqueue(error(401, error_type="invalid_api_key", message="Incorrect API key"))
    fake_upstream.kimi.enqueue(kimi_text("from kimi", model=KIMI, delay_s=0.4))
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with router_session(every_provider_env(fake_upstream), server_log) as session:
        result = await session.call_tool(
            "router_ask_many",
            {"prompt": "Is this migration safe?", "models": [SONNET, GPT, KIMI]},
            progress_callback=on_progress,
        )

    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    structured = result.structured_content or {}
    assert json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
    assert [a.get("content") for a in structured["answers"]] == ["from sonnet", None, "from kimi"]
    assert structured["answers"][1]["error"]["code"] == "OPENAI_API_ERROR"
    assert [(p, t) for p, t, _ in updates] == [(1, 3), (2, 3), (3, 3)]
    messages = [m or "" for _, _, m in updates]
    assert re.fullmatch(rf"1/3 {GPT} failed \(AUTH_FAILED\) in \d+\.\d s", messages[0]), messages
    assert re.fullmatch(rf"2/3 {KIMI} answered in \d+\.\d s", messages[1]), messages
    assert re.fullmatch(rf"3/3 {SONNET} answered in \d+\.\d s", messages[2]), messages


async def test_cancelling_the_call_closes_every_upstream_request_within_a_second(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("too late", hold_open_s=30))
    fake_upstream.route("openai").enqueue(openai_text("too late", model=GPT, hold_open_s=30))
    fake_upstream.kimi.enqueue(kimi_text("too late", model=KIMI, hold_open_s=30))
    async with router_session(every_provider_env(fake_upstream), server_log) as session:
        with anyio.move_on_after(1.0):  # abandoning the call sends notifications/cancelled
            await session.call_tool("router_ask_many", {"prompt": "long", "models": [SONNET, GPT, KIMI]})
        cancelled_at = time.monotonic()
        disconnects = await anyio.to_thread.run_sync(_disconnects, fake_upstream, 3, 5.0)
        after = await session.call_tool("router_ask_many", {"prompt": "next", "models": [SONNET, KIMI]})
    assert sorted(d.route for d in disconnects) == ["anthropic", "kimi", "openai"]
    print(f"every upstream request closed {max(d.at for d in disconnects) - cancelled_at:.3f} s after the cancel")
    assert all(d.at - cancelled_at < 1.0 for d in disconnects)
    assert [a["content"] for a in (after.structured_content or {})["answers"]] == ["echo: next", "echo: next"]


def _disconnects(fake: FakeUpstream, count: int, timeout: float) -> list[Disconnect]:
    """The client hang-ups once ``count`` have come, or after ``timeout`` seconds."""
    ends = time.monotonic() + timeout
    while len(fake.disconnects) < count and time.monotonic() < ends:
        time.sleep(0.01)
    return fake.disconnects


def test_the_ask_many_command_prints_the_result_and_each_model_on_stderr(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("A and B agree.\nAGREEMENT: 0.9", model=KIMI))
    completed = subprocess.run(
        [SERVER_COMMAND, "ask-many", "Is it safe?", "--model", SONNET, "--model", GPT, "--judge", "kimi"],
        check=False,
        env=every_provider_env(fake_upstream),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = json.loads(completed.stdout)
    assert [a["content"] for a in result["answers"]] == ["echo: Is it safe?", "echo: Is it safe?"]
    assert result["verdict"]["labels"] == {"A": SONNET, "B": GPT}
    assert (result["verdict"]["content"], result["verdict"]["agreement"]) == ("A and B agree.", 0.9)
    assert re.search(r"^3/3 judge kimi answered in \d+\.\d s$", completed.stderr, re.MULTILINE), completed.stderr
    refused = subprocess.run(
        [SERVER_COMMAND, "ask-many", "hi", "--model", SONNET],
        check=False,
        env=every_provider_env(fake_upstream),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]["code"] == "INVALID_REQUEST"
