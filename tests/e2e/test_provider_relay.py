"""End to end over stdio: one tool loop relayed across providers, every request checked by the strict
fake the way the real service checks it (issue "Providers, part 1", §7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_tool_use,
    k2_call_id,
    kimi_tool_calls,
    mistral_call_id,
    mistral_tool_calls,
    openai_call_id,
    openai_text,
    openai_tool_calls,
)
from harness import add_turn, every_provider_env, router_session

pytestmark = pytest.mark.e2e


async def test_a_tool_loop_relays_across_six_providers(
    fake_upstream: FakeUpstream, tmp_path: Path, server_log: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[providers.gpu-box]\nwire = "openai"\nbase_url = "{fake_upstream.base_url("custom")}"\n'
        'default_model = "Qwen/Qwen3-Coder"\nmodels = ["Qwen/Qwen3-Coder"]\n'
    )
    env = {**every_provider_env(fake_upstream), "COLIBRI_CONFIG": str(config)}
    fake_upstream.route("kimi").enqueue(
        kimi_tool_calls(
            [(k2_call_id("add", 0), "add", '{"a": 1, "b": 2}')], reasoning="start with 1+2", model="kimi-k2.6"
        )
    )
    fake_upstream.route("openai").enqueue(openai_tool_calls([(openai_call_id(), "add", '{"a": 3, "b": 4}')]))
    fake_upstream.route("mistral").enqueue(mistral_tool_calls([(mistral_call_id(), "add", '{"a": 7, "b": 8}')]))
    fake_upstream.route("anthropic").enqueue(anthropic_tool_use([("toolu_01relay", "add", {"a": 15, "b": 12})]))
    fake_upstream.route("openrouter").enqueue(
        openai_tool_calls(
            [(k2_call_id("add", 4), "add", '{"a": 27, "b": 15}')],
            reasoning="almost there",
            reasoning_field="reasoning",
            model="moonshotai/kimi-k2.6",
        )
    )
    fake_upstream.route("custom").enqueue(openai_text("The total is 42.", model="Qwen/Qwen3-Coder"))

    messages: list[dict[str, Any]] = [{"role": "user", "content": "Add up 1+2, then keep adding."}]
    async with router_session(env, server_log) as session:
        answers = [
            await add_turn(session, messages, provider="kimi", model="kimi-k2.6"),
            await add_turn(session, messages, model="gpt-4.1"),
            await add_turn(session, messages, model="mistral-large-latest"),
            await add_turn(session, messages, model="claude-sonnet-4-5"),
            await add_turn(session, messages, model="openrouter:moonshotai/kimi-k2.6"),
            await add_turn(session, messages, model="Qwen/Qwen3-Coder"),
        ]

    assert fake_upstream.violations == []
    assert [a["provider"] for a in answers] == ["kimi", "openai", "mistral", "claude", "openrouter", "gpu-box"]
    assert answers[-1]["content"] == "The total is 42."
    assert answers[-1]["message"] is None
    assert all(a["stop_reason"] == "tool_use" for a in answers[:-1])
    # Every provider saw the whole loop in its own dialect.
    custom = fake_upstream.route("custom").requests[-1].body
    assert [m["role"] for m in custom["messages"]].count("tool") == 5
    openrouter = fake_upstream.route("openrouter").requests[-1].body
    kimi_turn = next(m for m in openrouter["messages"] if m.get("tool_calls"))
    assert kimi_turn["reasoning"] == "start with 1+2"  # the Kimi model's own reasoning, in OpenRouter's field
    assert kimi_turn["tool_calls"][0]["id"] == "functions.add:0"
    mistral = fake_upstream.route("mistral").requests[-1].body
    assert all(len(m["tool_call_id"]) == 9 for m in mistral["messages"] if m["role"] == "tool")
