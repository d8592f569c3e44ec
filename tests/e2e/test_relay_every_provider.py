"""End to end over stdio: one tool loop visits all eight native-wire families in turn, and a second
loop makes two parallel calls per turn through every provider; the strict fake checks each request the
way the real service would (Gemini's call/response counts, ids and signatures; Mistral's IDs; OpenAI's
ordering). Issue "Providers, part 2", §5."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_tool_use,
    cohere_call_id,
    cohere_tool_calls,
    k2_call_id,
    kimi_tool_calls,
    mistral_call_id,
    mistral_tool_calls,
    ollama_tool_calls,
    openai_call_id,
    openai_text,
    openai_tool_calls,
)
from fake_upstream import gemini_tool_calls as gemini_calls
from harness import add_turn, every_provider_env, router_session

pytestmark = pytest.mark.e2e

GEMINI_MODEL = "gemini-3.5-flash"
OLLAMA_MODEL = "qwen3"


def env_with_native_wires(fake: FakeUpstream) -> dict[str, str]:
    return {
        **every_provider_env(fake),
        "GEMINI_API_KEY": "gemini-e2e-secret-0123456789",
        "GEMINI_BASE_URL": fake.base_url("gemini"),
        "CO_API_KEY": "cohere-e2e-secret-0123456789",
        "COHERE_BASE_URL": fake.base_url("cohere"),
        "OLLAMA_HOST": fake.base_url("ollama"),
    }


def args_for(pairs: list[tuple[int, int]]) -> list[tuple[str, str]]:
    return [(f'{{"a": {a}, "b": {b}}}', f"{a}+{b}") for a, b in pairs]


def script(fake: FakeUpstream, pairs_per_turn: list[list[tuple[int, int]]]) -> None:
    """Each provider answers its turn with calls of ``add`` (one or several in parallel)."""
    kimi, claude, openai, gemini, mistral, cohere, ollama, openrouter = pairs_per_turn
    fake.route("kimi").enqueue(
        kimi_tool_calls(
            [(k2_call_id("add", i), "add", f'{{"a": {a}, "b": {b}}}') for i, (a, b) in enumerate(kimi)],
            reasoning="add them up",
            model="kimi-k2.6",
        )
    )
    fake.route("anthropic").enqueue(
        anthropic_tool_use([(f"toolu_0{i}x", "add", {"a": a, "b": b}) for i, (a, b) in enumerate(claude)])
    )
    fake.route("openai").enqueue(
        openai_tool_calls([(openai_call_id(), "add", f'{{"a": {a}, "b": {b}}}') for a, b in openai])
    )
    fake.route("gemini").enqueue(
        gemini_calls([("add", {"a": a, "b": b}) for a, b in gemini], ids=True, signatures=True, model=GEMINI_MODEL)
    )
    fake.route("mistral").enqueue(
        mistral_tool_calls([(mistral_call_id(), "add", f'{{"a": {a}, "b": {b}}}') for a, b in mistral])
    )
    fake.route("cohere").enqueue(
        cohere_tool_calls(
            [(cohere_call_id("add"), "add", f'{{"a": {a}, "b": {b}}}') for a, b in cohere], tool_plan="I will add."
        )
    )
    fake.route("ollama").enqueue(
        ollama_tool_calls([("add", {"a": a, "b": b}) for a, b in ollama], ids=False, model=OLLAMA_MODEL)
    )
    fake.route("openrouter").enqueue(
        openai_tool_calls(
            [(k2_call_id("add", 20 + i), "add", f'{{"a": {a}, "b": {b}}}') for i, (a, b) in enumerate(openrouter)],
            reasoning="nearly done",
            reasoning_field="reasoning",
            model="moonshotai/kimi-k2.6",
        )
    )


TURNS: list[dict[str, Any]] = [
    {"provider": "kimi", "model": "kimi-k2.6"},
    {"model": "claude-sonnet-4-5"},
    {"model": "gpt-4.1"},
    {"model": GEMINI_MODEL},
    {"model": "mistral-large-latest"},
    {"model": "command-a-03-2025"},
    {"model": f"ollama:{OLLAMA_MODEL}"},
    {"model": "openrouter:moonshotai/kimi-k2.6"},
]
PROVIDERS = ["kimi", "claude", "openai", "gemini", "mistral", "cohere", "ollama", "openrouter"]


async def relay(
    fake: FakeUpstream, server_log: Path, pairs_per_turn: list[list[tuple[int, int]]]
) -> list[dict[str, Any]]:
    script(fake, pairs_per_turn)
    fake.route("openai").enqueue(openai_text("Every sum is done: the last was 42."))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Add these numbers, one provider at a time."}]
    async with router_session(env_with_native_wires(fake), server_log) as session:
        answers = [await add_turn(session, messages, **turn) for turn in TURNS]
        answers.append(await add_turn(session, messages, model="gpt-4.1"))
    assert fake.violations == []
    assert [a["provider"] for a in answers] == [*PROVIDERS, "openai"]
    assert answers[-1]["content"] == "Every sum is done: the last was 42."
    return answers


async def test_a_tool_loop_visits_all_eight_providers(fake_upstream: FakeUpstream, server_log: Path) -> None:
    answers = await relay(fake_upstream, server_log, [[(i, i + 1)] for i in range(8)])
    assert all(len(a["tool_calls"]) == 1 for a in answers[:-1])
    # The last request carried the whole loop: eight calls, eight results, in OpenAI's order.
    body = fake_upstream.route("openai").requests[-1].body
    assert sum(len(m.get("tool_calls") or []) for m in body["messages"]) == 8
    assert [m["role"] for m in body["messages"]].count("tool") == 8
    # Gemini's own turn went back to it with its id and signature (checked by the fake on replay).
    gemini_ids = [c["id"] for a in answers[3:4] for c in a["tool_calls"]]
    assert gemini_ids and all(i for i in gemini_ids)


async def test_parallel_tool_calls_through_every_provider(fake_upstream: FakeUpstream, server_log: Path) -> None:
    answers = await relay(fake_upstream, server_log, [[(i, 1), (i, 2)] for i in range(8)])
    assert all(len(a["tool_calls"]) == 2 for a in answers[:-1])
    for answer in answers[:-1]:
        first, second = answer["tool_calls"]
        assert first["id"] != second["id"]
    body = fake_upstream.route("openai").requests[-1].body
    assert [m["role"] for m in body["messages"]].count("tool") == 16
