"""Jobs through the real process over stdio with the official client (docs/jobs.md): a long call
hands off after COLIBRI_HANDOFF_S and router_job answers exactly what the call would have."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_upstream import FakeUpstream, anthropic_text, error, kimi_text
from harness import every_provider_env, router_session
from mcp.types import CallToolResult

pytestmark = pytest.mark.e2e

SONNET, KIMI = "claude-sonnet-4-5", "kimi-k2.6"
# Answers and fields that differ between two runs of the same call (timings).
_TIMINGS = {"latency_ms", "ttft_ms", "wall_ms"}


def _env(fake_upstream: FakeUpstream, **extra: str) -> dict[str, str]:
    return {**every_provider_env(fake_upstream), "COLIBRI_HANDOFF_S": "1", **extra}


def _structured(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None
    return result.structured_content


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_timings(item) for key, item in value.items() if key not in _TIMINGS}
    if isinstance(value, list):
        return [_without_timings(item) for item in value]
    return value


def _is_handle(result: CallToolResult) -> bool:
    structured = _structured(result)
    return not result.is_error and structured.get("status") == "running" and "job_id" in structured


async def _until_done(session: Any, job_id: str) -> CallToolResult:
    for _ in range(20):
        result = await session.call_tool("router_job", {"job_id": job_id, "wait_s": 10})
        if not _is_handle(result):
            return result  # type: ignore[no-any-return]
    raise AssertionError("the job never ended")


@pytest.mark.parametrize(
    ("tool", "arguments", "replies"),
    [
        (
            "router_call",
            {"prompt": "slow one", "model": KIMI},
            [("kimi", kimi_text("the answer", model=KIMI, delay_s=2.5))],
        ),
        (
            "router_ask_many",
            {"prompt": "slow many", "models": [SONNET, KIMI], "judge": "kimi"},
            [
                ("anthropic", anthropic_text("from sonnet", delay_s=2.5)),
                ("kimi", kimi_text("from kimi", model=KIMI, delay_s=2.0)),
            ],
        ),
        (
            "router_call",
            {"prompt": "slow failure", "model": KIMI},
            [("kimi", error(401, message="bad key", delay_s=2.5))],
        ),
    ],
    ids=["router_call", "router_ask_many", "an error"],
)
async def test_a_call_past_the_hand_off_answers_a_handle_and_router_job_the_exact_result(
    fake_upstream: FakeUpstream, server_log: Path, tool: str, arguments: dict[str, Any], replies: list[tuple[str, Any]]
) -> None:
    def enqueue() -> None:
        for route, reply in replies:
            fake_upstream.route(route).enqueue(reply)

    async with router_session(_env(fake_upstream), server_log) as session:
        enqueue()
        handle = await session.call_tool(tool, arguments)
        assert _is_handle(handle), _text(handle)
        job = _structured(handle)
        assert job["job_id"].startswith("job_")
        assert "router_job" in job["next"] and job["job_id"] in job["next"]
        final = await _until_done(session, job["job_id"])
        again = await session.call_tool("router_job", {"job_id": job["job_id"], "wait_s": 0})
        enqueue()
        direct = await session.call_tool(tool, {**arguments, "background": False})

    # The same answer the call gives without a job, and the same answer every time it is asked for.
    assert (final.is_error, _structured(final), _text(final)) == (again.is_error, _structured(again), _text(again))
    assert final.is_error == direct.is_error
    assert _without_timings(_structured(final)) == _without_timings(_structured(direct))
    if final.is_error:
        assert _text(final).startswith(_structured(final)["error"]["code"] + ": ")
    else:
        assert json.loads(_text(final)) == _structured(final)
