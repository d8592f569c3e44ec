"""Jobs through the real process over stdio with the official client (docs/jobs.md): a long call
hands off after COLIBRI_HANDOFF_S and router_job answers exactly what the call would have."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_upstream import FakeUpstream, anthropic_text, error, kimi_text, kimi_tool_calls, openai_text
from harness import every_provider_env, router_session
from mcp.types import CallToolResult

pytestmark = pytest.mark.e2e

SONNET, KIMI = "claude-sonnet-4-5", "kimi-k2.6"
SCENARIO = {
    "colibri": 1,
    "name": "lookup",
    "models": ["kimi:kimi-k2-0905-preview"],
    "repeat": 1,
    "prompt": "Look up order 12345.",
    "tools": [
        {
            "name": "lookup_order",
            "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "responses": [{"when": {"order_id": "12345"}, "then": "shipped"}],
        }
    ],
    "expect": [{"type": "tool_called", "tool": "lookup_order"}, {"type": "final_text", "contains": ["shipped"]}],
}
LOOKUP = ("functions.lookup_order:0", "lookup_order", '{"order_id": "12345"}')
# Answers and fields that differ between two runs of the same call (timings).
_TIMINGS = ("latency_ms", "ttft_ms", "wall_ms")


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
        return {key: _without_timings(item) for key, item in value.items() if not key.endswith(_TIMINGS)}
    if isinstance(value, list):
        return [_without_timings(item) for item in value]
    return value


def _ledger_rows() -> list[tuple[Any, ...]]:
    """The ledger's rows in order, without their times."""
    database = Path(os.environ["COLIBRI_STATE_DIR"]) / "colibri.db"
    with sqlite3.connect(database) as connection:
        return connection.execute(
            "SELECT principal, thread_id, provider, model, input_tokens, output_tokens, cached_tokens,"
            " cache_write_tokens, reasoning_tokens, cost_micro_usd, outcome, kind FROM ledger ORDER BY id"
        ).fetchall()


def _halves(rows: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    assert len(rows) % 2 == 0, rows
    return sorted(rows[: len(rows) // 2]), sorted(rows[len(rows) // 2 :])


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
            "router_run",
            {"scenario": SCENARIO},
            [("kimi", kimi_tool_calls([LOOKUP], delay_s=2.5)), ("kimi", kimi_text("It has shipped."))],
        ),
        (
            "router_call",
            {"prompt": "slow failure", "model": KIMI},
            [("kimi", error(401, message="bad key", delay_s=2.5))],
        ),
    ],
    ids=["router_call", "router_ask_many", "router_run", "an error"],
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

    # The ledger counts the job's calls exactly as the direct ones: the same rows, once each.
    job_rows, direct_rows = _halves(_ledger_rows())
    assert job_rows == direct_rows
    assert job_rows
    # The same answer the call gives without a job, and the same answer every time it is asked for.
    assert (final.is_error, _structured(final), _text(final)) == (again.is_error, _structured(again), _text(again))
    assert final.is_error == direct.is_error
    assert _without_timings(_structured(final)) == _without_timings(_structured(direct))
    if final.is_error:
        assert _text(final).startswith(_structured(final)["error"]["code"] + ": ")
    else:
        assert json.loads(_text(final)) == _structured(final)


async def test_router_job_returns_when_the_job_ends_and_passes_its_progress_on(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("from sonnet", delay_s=1.5))
    fake_upstream.kimi.enqueue(kimi_text("from kimi", model=KIMI, delay_s=3.0))
    progress: list[str] = []

    async def on_progress(_progress: float, _total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with router_session(_env(fake_upstream), server_log) as session:
        handle = await session.call_tool(
            "router_ask_many", {"prompt": "q", "models": [SONNET, KIMI], "background": True}
        )
        assert _is_handle(handle)  # at once, whatever COLIBRI_HANDOFF_S
        job_id = _structured(handle)["job_id"]
        started = time.monotonic()
        final = await session.call_tool("router_job", {"job_id": job_id, "wait_s": 55}, progress_callback=on_progress)
        waited = time.monotonic() - started
        listed = await session.call_tool("router_job", {})

    assert not final.is_error
    assert [answer["content"] for answer in _structured(final)["answers"]] == ["from sonnet", "from kimi"]
    assert waited < 55  # it answered when the job ended, not when wait_s ran out
    assert any(message.startswith("1/2 ") for message in progress), progress
    assert any(message.startswith("2/2 ") for message in progress), progress
    [job] = _structured(listed)["jobs"]
    assert (job["job_id"], job["tool"], job["status"]) == (job_id, "router_ask_many", "succeeded")
    assert job["cost_usd"] == _structured(final)["total_cost_usd"]


async def test_a_running_job_answers_its_handle_with_the_progress_so_far(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("from sonnet"))
    fake_upstream.kimi.enqueue(kimi_text("from kimi", model=KIMI, hold_open_s=30))
    async with router_session(_env(fake_upstream), server_log) as session:
        handle = await session.call_tool("router_ask_many", {"prompt": "q", "models": [SONNET, KIMI]})
        assert _is_handle(handle)
        job_id = _structured(handle)["job_id"]
        later = await session.call_tool("router_job", {"job_id": job_id, "wait_s": 0.5})
        cancelled = await session.call_tool("router_job", {"job_id": job_id, "cancel": True, "wait_s": 10})
        cancelled_at = time.monotonic()
        disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)

    assert _is_handle(later)
    assert _structured(later)["progress"].startswith("1/2 claude-sonnet-4-5 answered")
    assert _structured(later)["cost_usd"] > 0
    assert cancelled.is_error
    assert _structured(cancelled)["error"]["code"] == "JOB_CANCELLED"
    assert _structured(cancelled)["error"]["kind"] == "CANCELLED"
    assert disconnect is not None  # the upstream request was closed
    print(f"upstream closed {disconnect.at - cancelled_at:+.3f} s from the cancel's answer")


async def test_an_unknown_job_is_a_coded_error_and_the_store_off_keeps_jobs_in_memory(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("late", model=KIMI, delay_s=2.0))
    async with router_session(_env(fake_upstream, COLIBRI_STORE="off"), server_log) as session:
        unknown = await session.call_tool("router_job", {"job_id": "job_nope"})
        handle = await session.call_tool("router_call", {"prompt": "q", "model": KIMI})
        final = await _until_done(session, _structured(handle)["job_id"])
        listed = await session.call_tool("router_job", {})

    assert unknown.is_error
    assert _structured(unknown)["error"]["code"] == "JOB_NOT_FOUND"
    assert _is_handle(handle)
    assert _structured(final)["content"] == "late"
    assert [job["status"] for job in _structured(listed)["jobs"]] == ["succeeded"]


def _owner_pid(job_id: str) -> int:
    database = Path(os.environ["COLIBRI_STATE_DIR"]) / "colibri.db"
    with sqlite3.connect(database) as connection:
        (owner,) = connection.execute("SELECT owner FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
    return int(owner.split(":")[1])


async def test_a_server_killed_with_a_running_job_leaves_it_failed_with_server_stopped(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("never", model=KIMI, hold_open_s=60))
    async with router_session(_env(fake_upstream), server_log) as session:
        handle = await session.call_tool("router_call", {"prompt": "q", "model": KIMI, "background": True})
        job_id = _structured(handle)["job_id"]
        os.kill(_owner_pid(job_id), signal.SIGKILL)  # the server process: a crash, no clean shutdown
    async with router_session(_env(fake_upstream), server_log) as session:
        after = await session.call_tool("router_job", {"job_id": job_id, "wait_s": 5})
        listed = await session.call_tool("router_job", {})

    assert after.is_error
    assert _structured(after)["error"]["code"] == "SERVER_STOPPED"
    assert [(job["job_id"], job["status"]) for job in _structured(listed)["jobs"]] == [(job_id, "failed")]


async def test_a_finished_job_is_forgotten_after_colibri_job_ttl_s(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("soon gone", model=KIMI, delay_s=1.5))
    async with router_session(_env(fake_upstream, COLIBRI_JOB_TTL_S="1"), server_log) as session:
        handle = await session.call_tool("router_call", {"prompt": "q", "model": KIMI})
        final = await _until_done(session, _structured(handle)["job_id"])
        await anyio.sleep(1.5)
        gone = await session.call_tool("router_job", {"job_id": _structured(handle)["job_id"]})
        listed = await session.call_tool("router_job", {})

    assert _structured(final)["content"] == "soon gone"
    assert gone.is_error
    assert _structured(gone)["error"]["code"] == "JOB_NOT_FOUND"
    assert _structured(listed)["jobs"] == []


# The "done when", scaled down: four models that each take longer than the host waits, and a
# judge, for a host that cuts every tool call at CUT_S; the same answers and cost as a host that waits.
CUT_S = 4.0
MODEL_S = 6.0
FOUR = [SONNET, "gpt-4.1", KIMI, "deepseek-chat"]


def _four_slow_answers(fake_upstream: FakeUpstream) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("sonnet: safe", delay_s=MODEL_S))
    fake_upstream.route("openai").enqueue(openai_text("gpt: safe", model="gpt-4.1", delay_s=MODEL_S))
    fake_upstream.kimi.enqueue(
        kimi_text("kimi: unsafe", model=KIMI, delay_s=MODEL_S),
        kimi_text("Three say safe.\nAGREEMENT: 0.75", delay_s=1.5),  # the judge
    )
    fake_upstream.route("deepseek").enqueue(openai_text("deepseek: safe", model="deepseek-chat", delay_s=MODEL_S))


async def test_four_slow_models_and_a_judge_complete_for_a_host_that_cuts_calls(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    arguments = {"prompt": "Is this migration safe?", "models": FOUR, "judge": "kimi"}
    calls = 0
    async with router_session(_env(fake_upstream), server_log) as session:
        _four_slow_answers(fake_upstream)
        with anyio.fail_after(CUT_S):  # the host's cut-off: every tool call must answer within it
            result = await session.call_tool("router_ask_many", arguments)
        while _is_handle(result):
            calls += 1
            with anyio.fail_after(CUT_S):
                result = await session.call_tool(
                    "router_job", {"job_id": _structured(result)["job_id"], "wait_s": CUT_S - 1}
                )
        _four_slow_answers(fake_upstream)
        waited = await session.call_tool("router_ask_many", {**arguments, "background": False})

    assert calls >= 2  # it took several router_job calls, each under the cut-off
    assert not result.is_error
    assert _without_timings(_structured(result)) == _without_timings(_structured(waited))
    assert [answer["content"] for answer in _structured(result)["answers"]] == [
        "sonnet: safe",
        "gpt: safe",
        "kimi: unsafe",
        "deepseek: safe",
    ]
    assert _structured(result)["verdict"]["agreement"] == 0.75
    assert _structured(result)["total_cost_usd"] == _structured(waited)["total_cost_usd"] > 0
