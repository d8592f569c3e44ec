"""Structured output (issue 35) through the real router against the strict fake, on all 16 providers:
a valid answer becomes ``parsed``; an invalid one gets one repair turn (counted in tokens) and then
``INVALID_OUTPUT``; each request carries the form the registry gives the model, which the fake checks
the way the service does (strict schemas closed and all-required, json_object only when a message says
JSON, Gemini's keyword subset, Anthropic's closed objects)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_text,
    anthropic_tool_use,
    cohere_text,
    gemini_text,
    kimi_text,
    mistral_text,
    ollama_text,
    openai_text,
)
from fake_upstream.replies import MessageReply

from colibri_router.errors import ColibriError
from colibri_router.providers import BUILTIN
from colibri_router.router import route
from colibri_router.schema import RouterCallInput

CLASSIFY = {
    "type": "object",
    "properties": {"category": {"enum": ["billing", "bug", "other"]}, "urgent": {"type": "boolean"}},
    "required": ["category"],
}
PROMPT = "Classify: 'refund not received'"
Reply = Callable[[dict[str, Any]], MessageReply]


def _text(builder: Callable[..., MessageReply], **options: Any) -> Reply:
    return lambda value: builder(json.dumps(value), **options)


def _tool(value: dict[str, Any]) -> MessageReply:
    return anthropic_tool_use([("toolu_01abc", "answer", value)], model="kimi-k2.6")


# provider → (fake route, model, reply builder, the request field that carries the form)
PROVIDERS: dict[str, tuple[str, str, Reply, str]] = {
    "kimi": ("kimi", "kimi-k2.6", _text(kimi_text), "response_format"),
    "claude": ("anthropic", "claude-sonnet-4-5", _text(anthropic_text), "output_config"),
    "kimi-anthropic": ("kimi-anthropic", "kimi-k2.6", _tool, "tool_choice"),
    "openai": ("openai", "gpt-4.1", _text(openai_text, model="gpt-4.1"), "response_format"),
    "mistral": ("mistral", "mistral-large-latest", _text(mistral_text), "response_format"),
    "openrouter": ("openrouter", "openai/gpt-5.5", _text(openai_text, model="openai/gpt-5.5"), "response_format"),
    "groq": ("groq", "llama-3.3-70b-versatile", _text(openai_text, reasoning_field="reasoning"), "response_format"),
    "together": ("together", "Qwen/Qwen3-235B-A22B-Instruct-2507-tput", _text(openai_text), "response_format"),
    "fireworks": ("fireworks", "accounts/fireworks/models/kimi-k2p6", _text(openai_text), "response_format"),
    "siliconflow": ("siliconflow", "deepseek-ai/DeepSeek-V3.2", _text(openai_text), "response_format"),
    "deepseek": ("deepseek", "deepseek-chat", _text(openai_text, model="deepseek-chat"), "response_format"),
    "gemini": ("gemini", "gemini-3.5-flash", _text(gemini_text), "generationConfig"),
    "cohere": ("cohere", "command-a-03-2025", _text(cohere_text), "response_format"),
    "ollama": ("ollama", "qwen3", _text(ollama_text), "format"),
    "vllm": ("vllm", "moonshotai/Kimi-K2-Instruct", _text(openai_text), "response_format"),
    "lmstudio": ("lmstudio", "qwen/qwen3-coder-30b", _text(openai_text), "response_format"),
}


# The fake hosts that stream usage without stream_options asking for it (the others report none here).
REPORT_USAGE = {
    "kimi",
    "claude",
    "kimi-anthropic",
    "openai",
    "mistral",
    "openrouter",
    "groq",
    "gemini",
    "cohere",
    "ollama",
}


@pytest.fixture
def fake(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    for name, (route_name, *_) in PROVIDERS.items():
        spec = BUILTIN[name]
        monkeypatch.setenv(spec.base_url_env, fake_upstream.base_url(route_name))
        for variable in spec.key_envs[:1]:
            monkeypatch.setenv(variable, f"sk-{name}-test-0123456789abcdef0123456789")
    return fake_upstream


async def ask(provider: str, schema: dict[str, Any] = CLASSIFY, **args: Any) -> Any:
    model = PROVIDERS[provider][1]
    call = {"prompt": PROMPT, "provider": provider, "model": model, "response_schema": schema, **args}
    return await route(RouterCallInput.model_validate(call))


def bodies(fake: FakeUpstream, provider: str) -> list[dict[str, Any]]:
    return [request.body for request in fake.route(PROVIDERS[provider][0]).requests]


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_a_valid_answer_becomes_parsed_on_every_provider(fake: FakeUpstream, provider: str) -> None:
    route_name, _, reply, field = PROVIDERS[provider]
    fake.route(route_name).enqueue(reply({"category": "billing", "urgent": True}))
    result = await ask(provider)
    assert fake.violations == []
    assert result.parsed == {"category": "billing", "urgent": True}
    assert json.loads(result.content) == result.parsed  # content keeps the raw text
    assert result.tool_calls == []
    [body] = bodies(fake, provider)
    assert field in body


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_an_invalid_answer_gets_one_repair_turn_then_parses(fake: FakeUpstream, provider: str) -> None:
    route_name, _, reply, _ = PROVIDERS[provider]
    fake.route(route_name).enqueue(reply({"category": "refund"}), reply({"category": "other"}))
    result = await ask(provider)
    assert fake.violations == []
    assert result.parsed == {"category": "other"}
    first, repair = bodies(fake, provider)
    assert "$.category" in json.dumps(repair) and "$.category" not in json.dumps(first)
    if provider in REPORT_USAGE:  # both turns counted
        assert (result.prompt_tokens, result.completion_tokens) == (40, 20)
    assert "output_repaired" in result.repairs


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_two_invalid_answers_are_invalid_output(fake: FakeUpstream, provider: str) -> None:
    route_name, _, reply, _ = PROVIDERS[provider]
    fake.route(route_name).enqueue(reply({"category": "refund"}), reply({"urgent": "yes"}))
    with pytest.raises(ColibriError) as caught:
        await ask(provider)
    error = caught.value
    assert (error.code, error.kind, error.retryable_later) == ("INVALID_OUTPUT", "INVALID_OUTPUT", True)
    assert "$: 'category' is a required property" in error.message
    assert error.details is not None and json.loads(error.details["raw"]) == {"urgent": "yes"}
    assert len(bodies(fake, provider)) == 2  # one repair turn, no more
