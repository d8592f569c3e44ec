"""Streaming, progress, cancellation and deadlines through the real server process.

Real sockets matter here: the fake upstream records the moment a client hangs up, which is how the
tests see that cancelling a call closes the upstream request.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import anyio
import pytest
from fake_upstream import FakeUpstream, anthropic_tool_use, error, kimi_sse_events, kimi_text, raw_stream
from harness import router_session

pytestmark = pytest.mark.e2e


async def test_progress_reaches_the_host_while_the_upstream_is_silent(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    # A thinking model quiet for 4.5 s: the heartbeat (every 4 s) must keep the host informed.
    fake_upstream.kimi.enqueue(kimi_text("finally", hold_open_s=4.5))
    fake_upstream.anthropic.enqueue(anthropic_tool_use([("toolu_9", "read_file", {"path": "p"})]))
    updates: list[tuple[float, float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((time.monotonic(), progress, message))

    async with router_session(server_env, server_log) as session:
        slow = await session.call_tool("router_call", {"prompt": "think"}, progress_callback=on_progress)
        kimi_updates = list(updates)
        updates.clear()
        tools = [{"name": "read_file", "input_schema": {"type": "object"}}]
        await session.call_tool(
            "router_call", {"prompt": "go", "provider": "claude", "tools": tools}, progress_callback=on_progress
        )
    assert (slow.structured_content or {})["content"] == "finally"
    silent = [u for u in kimi_updates if u[2] and "waiting for the first token" in u[2]]
    assert len(silent) >= 2, kimi_updates
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(kimi_updates)]
    assert max(gaps) < 5.0
    assert [u[1] for u in kimi_updates] == sorted({u[1] for u in kimi_updates})
    assert any(m and m.startswith("claude: ") and "tool_call read_file" in m for _, _, m in updates)


async def test_cancelling_a_call_closes_the_upstream_request_within_a_second(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("too late", hold_open_s=30))
    fake_upstream.anthropic.enqueue(error(200, error_type="unused", message="unused"))  # not reached
    async with router_session(server_env, server_log) as session:
        with anyio.move_on_after(1.0):  # abandoning the call sends notifications/cancelled
            await session.call_tool("router_call", {"prompt": "long"})
        cancelled_at = time.monotonic()
        disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)
        # The server is still serving after the cancellation.
        after = await session.call_tool("router_call", {"prompt": "next"})
    assert disconnect is not None, "the upstream never saw the connection drop"
    assert disconnect.at - cancelled_at < 1.0
    assert (after.structured_content or {})["content"] == "echo: next"


async def test_deadline_is_its_own_error_code_and_stops_the_upstream(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("slow", delay_s=10))
    server_env["COLIBRI_TIMEOUT_S"] = "0.8"
    async with router_session(server_env, server_log) as session:
        started = time.monotonic()
        result = await session.call_tool("router_call", {"prompt": "hi"})
        elapsed = time.monotonic() - started
        overridden = await session.call_tool("router_call", {"prompt": "hi", "timeout_s": 5})
    assert result.is_error
    assert result.content[0].text.startswith("KIMI_TIMEOUT: ")
    assert elapsed < 5
    assert fake_upstream.wait_disconnect(2.0) is not None
    assert not overridden.is_error


async def test_retry_after_beyond_the_deadline_is_not_waited_for(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(
        error(429, error_type="rate_limit_reached_error", message="slow down", headers={"Retry-After": "20"})
    )
    async with router_session(server_env, server_log) as session:
        started = time.monotonic()
        result = await session.call_tool("router_call", {"prompt": "hi", "timeout_s": 3})
    assert time.monotonic() - started < 3
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("KIMI_API_ERROR: HTTP 429 rate_limit_reached_error")
    assert "deadline" in text
    assert len(fake_upstream.kimi.requests) == 1


async def test_a_cut_stream_is_an_error_and_is_not_retried(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    events = kimi_sse_events(kimi_text("a long answer that never ends").body)
    fake_upstream.kimi.enqueue(raw_stream(events, drop_after=2))
    async with router_session(server_env, server_log) as session:
        result = await session.call_tool("router_call", {"prompt": "hi"})
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("KIMI_API_ERROR: ")
    assert "cut" in text
    assert len(fake_upstream.kimi.requests) == 1
