"""End to end over stdio: fallbacks across providers, router_models, structured errors, threads that
survive a restart, budgets, the ledger and router_usage (issues "Errors, cost, models, fallbacks" and
"State that survives")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_text,
    anthropic_tool_use,
    error,
    kimi_text,
    kimi_tool_calls,
)
from harness import ADD_TOOL, add_turn, every_provider_env, router_session

pytestmark = pytest.mark.e2e

QUOTA = error(
    429, message="You exceeded your current quota", error_type="insufficient_quota", code="insufficient_quota"
)


async def test_quota_on_openai_falls_to_claude_and_the_loop_continues(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.route("openai").enqueue(QUOTA)
    fake_upstream.anthropic.enqueue(
        anthropic_tool_use([("toolu_01fb", "add", {"a": 2, "b": 3})]), anthropic_text("The sum is 5.")
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "add 2 and 3"}]
    async with router_session(every_provider_env(fake_upstream), server_log) as session:
        first = await add_turn(session, messages, model="gpt-4.1", fallback=["sonnet"])
        second = await add_turn(session, messages, model="claude-sonnet-4-5")
    assert [(a["provider"], a["outcome"], a["kind"]) for a in first["attempts"]] == [
        ("openai", "OPENAI_API_ERROR", "QUOTA_EXCEEDED"),
        ("claude", "ok", None),
    ]
    assert second["content"] == "The sum is 5."
    assert len(fake_upstream.route("openai").requests) == 1  # a quota is not retried
    assert fake_upstream.violations == []


async def test_router_models_lists_every_provider_and_which_have_a_key(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    from colibri_router.providers import BUILTIN

    async with router_session(server_env, server_log) as session:
        result = await session.call_tool("router_models", {})
    listing = result.structured_content
    assert listing is not None
    configured = {p["name"]: p["configured"] for p in listing["providers"]}
    assert list(configured) == list(BUILTIN)
    assert {name for name, has_key in configured.items() if has_key} == {"kimi", "claude", "kimi-anthropic"}
    assert listing["aliases"]["sonnet"] == "claude:claude-sonnet-4-5"
    text = json.dumps(listing)
    assert "sk-kimi-e2e-secret" not in text and "sk-ant-e2e-secret" not in text


async def test_live_model_lists_are_asked_in_parallel_and_failures_reported(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.models = ["kimi-k2.6", "kimi-k3"]
    fake_upstream.anthropic.enqueue_model_list(error(500, message="down"))
    async with router_session(server_env, server_log) as session:
        result = await session.call_tool("router_models", {"live": True})
    providers = {p["name"]: p for p in (result.structured_content or {})["providers"]}
    assert providers["kimi"]["models"][:2] == ["kimi-k2.6", "kimi-k3"]
    assert providers["kimi"]["live_error"] is None
    assert providers["claude"]["live_error"].startswith("ANTHROPIC_API_ERROR")
    assert "claude-sonnet-4-5" in providers["claude"]["models"]  # known names still listed


async def test_an_error_result_is_structured_for_the_agent(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(
        error(429, message="slow down", error_type="rate_limit_reached_error", headers={"Retry-After": "0"})
    )
    fake_upstream.kimi.enqueue(*[error(429, message="slow down", error_type="rate_limit_reached_error")] * 3)
    async with router_session(server_env, server_log) as session:
        result = await session.call_tool("router_call", {"prompt": "hi"})
    assert result.is_error
    structured = result.structured_content or {}
    assert structured["error"]["code"] == "KIMI_RETRIES_EXHAUSTED"
    assert structured["error"]["kind"] == "RATE_LIMITED"
    assert structured["error"]["retryable"] is True
    assert structured["error"]["provider"] == "kimi"
    assert structured["attempts"][0]["kind"] == "RATE_LIMITED"
    code_line, object_line = result.content[0].text.split("\n")  # type: ignore[union-attr]
    assert code_line.startswith("KIMI_RETRIES_EXHAUSTED: ")
    assert json.loads(object_line)["error"]["kind"] == "RATE_LIMITED"


async def test_a_thread_survives_a_restart_and_moves_between_providers(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    """Four turns on one thread, sending only the new turns; the server restarts between turns 2 and
    3, and turn 3 moves from Kimi to Claude."""
    fake_upstream.kimi.enqueue(
        kimi_tool_calls([("functions.add:0", "add", '{"a": 1, "b": 1}')]), kimi_text("1+1 is 2. Anything else?")
    )
    fake_upstream.anthropic.enqueue(
        anthropic_tool_use([("toolu_01t", "add", {"a": 2, "b": 2})]), anthropic_text("2+2 is 4.")
    )

    async def call(session: Any, content: Any, **args: Any) -> dict[str, Any]:
        result = await session.call_tool(
            "router_call", {"messages": [{"role": "user", "content": content}], "tools": [ADD_TOOL], **args}
        )
        assert not result.is_error, result.content[0].text
        return result.structured_content

    def answer(structured: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"type": "tool_result", "tool_use_id": c["id"], "content": str(c["input"]["a"] + c["input"]["b"])}
            for c in structured["tool_calls"]
        ]

    async with router_session(server_env, server_log) as session:
        one = await call(session, "add 1 and 1", thread_id="new", model="kimi-k2-0905-preview")
        thread = one["thread_id"]
        assert one["message"] is None
        two = await call(session, answer(one), thread_id=thread, model="kimi-k2-0905-preview")
    async with router_session(server_env, server_log) as session:  # a new server process
        three = await call(session, "now add 2 and 2", thread_id=thread, model="claude-sonnet-4-5")
        four = await call(session, answer(three), thread_id=thread, model="claude-sonnet-4-5")
        listing = (await session.call_tool("router_threads", {"action": "list"})).structured_content
        stored = (await session.call_tool("router_threads", {"action": "get", "thread_id": thread})).structured_content
        deleted = (
            await session.call_tool("router_threads", {"action": "delete", "thread_id": thread})
        ).structured_content
        gone = await session.call_tool("router_threads", {"action": "get", "thread_id": thread})
    assert two["content"] == "1+1 is 2. Anything else?"
    assert four["content"] == "2+2 is 4."
    assert fake_upstream.violations == []
    claude_history = fake_upstream.anthropic.requests[-1].body["messages"]
    assert len(claude_history) == 7  # all four turns' messages: the host sent only the new ones
    assert listing["threads"][0]["thread_id"] == thread
    assert listing["threads"][0]["title"] == "add 1 and 1"
    assert listing["threads"][0]["turns"] == 8
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant"] * 4
    assert deleted == {"thread_id": thread, "deleted": True}
    assert gone.is_error and "INVALID_REQUEST" in gone.content[0].text


async def test_a_reached_budget_stops_the_next_call_before_any_upstream_request(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    env = {**server_env, "COLIBRI_BUDGET_DAILY_USD": "0.00001"}
    async with router_session(env, server_log) as session:
        first = await session.call_tool("router_call", {"prompt": "hi", "model": "kimi-k2-0905-preview"})
        second = await session.call_tool("router_call", {"prompt": "again", "model": "kimi-k2-0905-preview"})
    assert not first.is_error
    assert second.is_error
    assert (second.structured_content or {})["error"]["kind"] == "BUDGET_EXCEEDED"
    assert len(fake_upstream.kimi.requests) == 1  # the second call sent nothing


async def test_usage_totals_equal_the_calls_costs_and_a_cancelled_call_has_its_row(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("one"), kimi_text("two"), kimi_text("slow", delay_s=30))
    async with router_session(server_env, server_log) as session:
        costs = [
            (await session.call_tool("router_call", {"prompt": p, "model": "kimi-k2-0905-preview"})).structured_content[
                "cost_usd"
            ]
            for p in ("a", "b")
        ]
        with anyio.move_on_after(1.0):
            await session.call_tool("router_call", {"prompt": "c", "model": "kimi-k2-0905-preview"})
        await anyio.sleep(0.3)  # the server records the cancelled call's row
        usage = (await session.call_tool("router_usage", {"since": "today", "by": "model"})).structured_content
    assert usage["total"]["calls"] == 3
    assert usage["total"]["errors"] == 1
    assert usage["total"]["cost_usd"] == pytest.approx(sum(costs), abs=1e-6)
