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
from colibri_router.router.call import call_from
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


async def routed(args: RouterCallInput, **options: Any) -> Any:
    """The router's result for ``args`` (the call object made as router_call makes it)."""
    return (await route(call_from(args), **options)).result


async def ask_outcome(provider: str, schema: dict[str, Any] = CLASSIFY, **args: Any) -> Any:
    """The router's outcome (its result and what it repaired) for the classification prompt."""
    call = {"prompt": PROMPT, "provider": provider, "model": PROVIDERS[provider][1], "response_schema": schema, **args}
    return await route(call_from(RouterCallInput.model_validate(call)))


async def ask(provider: str, schema: dict[str, Any] = CLASSIFY, **args: Any) -> Any:
    return (await ask_outcome(provider, schema, **args)).result


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
    outcome = await ask_outcome(provider)
    result = outcome.result
    assert fake.violations == []
    assert result.parsed == {"category": "other"}
    first, repair = bodies(fake, provider)
    assert "$.category" in json.dumps(repair) and "$.category" not in json.dumps(first)
    if provider in REPORT_USAGE:  # both turns counted
        assert (result.prompt_tokens, result.completion_tokens) == (40, 20)
    assert "output_repaired" in outcome.repairs


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


NESTED = {
    "type": "object",
    "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}},
    "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "status": {"enum": ["open", "closed"]},
        "owner": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"id": {"type": "integer"}}}]},
        "note": {"type": "string", "maxLength": 20},
    },
    "required": ["items", "status"],
}


async def test_nested_defs_any_of_and_optionals_go_strict_to_openai_and_come_back_as_the_caller_wrote(
    fake: FakeUpstream,
) -> None:
    answer = {"items": [{"sku": "A1", "qty": None}], "status": "open", "owner": {"id": 7}, "note": None}
    fake.route("openai").enqueue(openai_text(json.dumps(answer), model="gpt-4.1"))
    result = await ask("openai", NESTED)
    assert fake.violations == []
    assert result.parsed == {"items": [{"sku": "A1"}], "status": "open", "owner": {"id": 7}}
    [body] = bodies(fake, "openai")
    sent = body["response_format"]["json_schema"]
    assert sent["strict"] is True and sent["name"] == "answer"
    assert sent["schema"]["required"] == ["items", "status", "owner", "note"]
    assert any("maxLength" in warning for warning in result.warnings)
    assert "maxLength" in json.dumps(body["messages"])  # moved into the prompt


async def test_json_mode_hosts_get_the_schema_in_a_prompt_that_says_json(fake: FakeUpstream) -> None:
    fake.route("deepseek").enqueue(openai_text('{"category": "bug"}', model="deepseek-chat"))
    result = await ask("deepseek", response_schema_name="ticket")
    assert result.parsed == {"category": "bug"}
    [body] = bodies(fake, "deepseek")
    assert body["response_format"] == {"type": "json_object"}
    assert (
        body["messages"][0]["role"] == "system" and '"enum":["billing","bug","other"]' in body["messages"][0]["content"]
    )


async def test_a_refusal_is_content_filtered(fake: FakeUpstream) -> None:
    fake.route("anthropic").enqueue(anthropic_text("I can't help with that.", stop_reason="refusal"))
    with pytest.raises(ColibriError) as caught:
        await ask("claude")
    assert caught.value.kind == "CONTENT_FILTERED" and "can't help" in caught.value.message
    fake.route("openai").enqueue(openai_text("", model="gpt-4.1", finish_reason="content_filter"))
    with pytest.raises(ColibriError) as caught:
        await ask("openai")
    assert caught.value.kind == "CONTENT_FILTERED"
    assert len(bodies(fake, "openai")) == 1  # no repair turn for a refusal


async def test_invalid_output_moves_the_chain_to_the_next_model(fake: FakeUpstream) -> None:
    fake.route("openai").enqueue(openai_text("nope", model="gpt-4.1"), openai_text("still nope", model="gpt-4.1"))
    fake.route("anthropic").enqueue(anthropic_text('{"category": "billing"}'))
    result = await ask("openai", fallback=["claude-sonnet-4-5"])
    assert result.provider == "claude" and result.parsed == {"category": "billing"}
    assert [(a.provider, a.kind) for a in result.attempts] == [("openai", "INVALID_OUTPUT"), ("claude", None)]
    [claude_body] = bodies(fake, "claude")
    assert "output_config" in claude_body  # each model gets its own form


TOOLS = [{"name": "lookup", "description": "Find an order", "input_schema": {"type": "object"}}]


async def test_tools_and_a_schema_where_the_wire_allows_it(fake: FakeUpstream) -> None:
    from fake_upstream import openai_call_id, openai_tool_calls

    fake.route("openai").enqueue(openai_tool_calls([(openai_call_id(), "lookup", "{}")]))
    result = await ask("openai", tools=TOOLS)
    assert fake.violations == []
    assert [call.name for call in result.tool_calls] == ["lookup"] and result.parsed is None
    [body] = bodies(fake, "openai")
    assert "response_format" in body and body["tools"][0]["function"]["name"] == "lookup"


@pytest.mark.parametrize(
    ("provider", "model"),
    [("gemini", "gemini-2.5-flash"), ("cohere", "command-a-03-2025"), ("kimi-anthropic", "kimi-k2.6")],
)
async def test_tools_and_a_schema_where_the_wire_does_not_are_refused_naming_the_model(
    fake: FakeUpstream, provider: str, model: str
) -> None:
    with pytest.raises(ColibriError) as caught:
        await ask(provider, tools=TOOLS, model=model)
    assert caught.value.kind == "INVALID_REQUEST" and model in caught.value.message
    assert bodies(fake, provider) == []  # nothing sent


async def test_gemini_3_takes_tools_and_a_schema_together(fake: FakeUpstream) -> None:
    fake.route("gemini").enqueue(gemini_text('{"category": "other"}'))
    result = await ask("gemini", tools=TOOLS)
    assert fake.violations == [] and result.parsed == {"category": "other"}


async def test_streaming_progress_as_today_and_parsed_at_the_end(fake: FakeUpstream) -> None:
    seen: list[str | None] = []

    async def notify(progress: float, message: str | None) -> None:
        seen.append(message)

    fake.route("openai").enqueue(openai_text('{"category": "bug", "urgent": false}', model="gpt-4.1"))
    call = {"prompt": PROMPT, "model": "gpt-4.1", "response_schema": CLASSIFY}
    result = await routed(RouterCallInput.model_validate(call), notify=notify)
    assert seen and result.parsed == {"category": "bug", "urgent": False}


def test_a_schema_that_is_not_one_is_refused_before_anything_is_sent() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="not a valid JSON Schema"):
        RouterCallInput.model_validate({"prompt": "x", "response_schema": {"type": "objekt"}})
    with pytest.raises(ValidationError, match="1-64 letters"):
        RouterCallInput.model_validate({"prompt": "x", "response_schema": CLASSIFY, "response_schema_name": "a b"})


VERDICT = {
    "type": "object",
    "properties": {"best": {"enum": ["A", "B"]}, "agreement": {"type": "number"}},
    "required": ["best"],
}


async def test_ask_many_parses_each_answer_and_the_judges_verdict(fake: FakeUpstream) -> None:
    from colibri_router.ask_many.schema import RouterAskManyInput
    from colibri_router.ask_many.service import ask_many

    fake.route("openai").enqueue(openai_text('{"category": "billing"}', model="gpt-4.1"))
    fake.route("deepseek").enqueue(openai_text('{"category": "bugs"}', model="deepseek-chat"))
    fake.route("deepseek").enqueue(openai_text('{"category": "bug"}', model="deepseek-chat"))
    fake.route("anthropic").enqueue(anthropic_text('{"best": "A"}'))
    args = {
        "prompt": PROMPT,
        "models": ["gpt-4.1", "deepseek-chat"],
        "response_schema": CLASSIFY,
        "judge": "claude-sonnet-4-5",
        "judge_schema": VERDICT,
    }
    result = await ask_many(RouterAskManyInput.model_validate(args))
    assert fake.violations == []
    assert [answer.parsed for answer in result.answers] == [{"category": "billing"}, {"category": "bug"}]
    assert result.verdict is not None and result.verdict.parsed == {"best": "A"}
    [judge_body] = bodies(fake, "claude")
    assert judge_body["output_config"]["format"]["schema"]["required"] == ["best", "agreement"]


async def test_ask_many_reports_invalid_output_per_model(fake: FakeUpstream) -> None:
    from colibri_router.ask_many.schema import RouterAskManyInput
    from colibri_router.ask_many.service import ask_many

    fake.route("openai").enqueue(openai_text('{"category": "billing"}', model="gpt-4.1"))
    fake.route("deepseek").enqueue(openai_text("no", model="deepseek-chat"), openai_text("no", model="deepseek-chat"))
    args = {"prompt": PROMPT, "models": ["gpt-4.1", "deepseek-chat"], "response_schema": CLASSIFY}
    result = await ask_many(RouterAskManyInput.model_validate(args))
    failed = result.answers[1].error
    assert failed is not None and failed.code == "INVALID_OUTPUT" and failed.details == {"raw": "no"}


def test_a_judge_schema_needs_a_judge_and_must_be_a_schema() -> None:
    from pydantic import ValidationError

    from colibri_router.ask_many.schema import RouterAskManyInput

    with pytest.raises(ValidationError, match="give `judge` too"):
        RouterAskManyInput.model_validate({"prompt": "x", "models": ["a", "b"], "judge_schema": VERDICT})
    with pytest.raises(ValidationError, match="not a valid JSON Schema"):
        RouterAskManyInput.model_validate(
            {"prompt": "x", "models": ["a", "b"], "judge": "c", "judge_schema": {"type": 3}}
        )


async def test_openais_refusal_field_is_content_filtered_with_its_text(fake: FakeUpstream) -> None:
    from fake_upstream import raw_stream

    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4.1"}
    events = [
        json.dumps({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "refusal": "I can't "}}]}),
        json.dumps({**chunk, "choices": [{"index": 0, "delta": {"refusal": "classify that."}}]}),
        json.dumps({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        "[DONE]",
    ]
    fake.route("openai").enqueue(raw_stream(events))
    with pytest.raises(ColibriError) as caught:
        await ask("openai")
    assert caught.value.kind == "CONTENT_FILTERED" and "I can't classify that." in caught.value.message


async def test_the_ledger_counts_both_turns_of_an_answer_that_never_matched(fake: FakeUpstream) -> None:
    from colibri_router.call.service import serve
    from colibri_router.settings import load_settings
    from colibri_router.store import shared_store

    fake.route("openai").enqueue(openai_text("no", model="gpt-4.1"), openai_text("no again", model="gpt-4.1"))
    call = {"prompt": PROMPT, "model": "gpt-4.1", "response_schema": CLASSIFY}
    with pytest.raises(ColibriError):
        await serve(RouterCallInput.model_validate(call))
    store = shared_store(load_settings())
    assert store is not None
    failed = (await store.usage_report(None, "all", None)).total
    assert (failed.calls, failed.errors, failed.input_tokens, failed.output_tokens) == (1, 1, 40, 20)
    assert failed.cost_micro_usd > 0
    fake.route("openai").enqueue(
        openai_text("no", model="gpt-4.1"), openai_text('{"category": "bug"}', model="gpt-4.1")
    )
    result = await serve(RouterCallInput.model_validate(call))
    assert result.parsed == {"category": "bug"}
    both = (await store.usage_report(None, "all", None)).total
    assert (both.calls, both.input_tokens, both.output_tokens) == (2, 80, 40)


async def test_a_thread_stores_the_raw_text(fake: FakeUpstream) -> None:
    from colibri_router.call.service import serve
    from colibri_router.callers import local_principal
    from colibri_router.settings import load_settings
    from colibri_router.store import shared_store

    raw = '{"category": "bug", "urgent": null}'
    fake.route("openai").enqueue(openai_text(raw, model="gpt-4.1"))
    call = {"prompt": PROMPT, "model": "gpt-4.1", "response_schema": CLASSIFY, "thread_id": "new"}
    result = await serve(RouterCallInput.model_validate(call))
    assert result.parsed == {"category": "bug"} and result.content == raw
    store = shared_store(load_settings())
    assert store is not None and result.thread_id is not None
    stored = (await store.load_thread(result.thread_id, local_principal())).messages
    assert stored[-1] == {"role": "assistant", "content": raw}


async def test_a_schema_strict_mode_cannot_send_goes_as_a_plain_schema_with_a_warning(fake: FakeUpstream) -> None:
    tags = {"type": "array", "items": {"type": "string"}, "minItems": 1}
    fake.route("openai").enqueue(openai_text('["billing", "refund"]', model="gpt-4.1"))
    result = await ask("openai", tags)
    assert fake.violations == [] and result.parsed == ["billing", "refund"]
    [body] = bodies(fake, "openai")
    assert "strict" not in body["response_format"]["json_schema"]
    assert any("strict mode cannot send" in warning for warning in result.warnings)
    open_meta = {"type": "object", "properties": {"meta": {"type": "object"}}, "required": ["meta"]}
    fake.route("anthropic").enqueue(anthropic_tool_use([("toolu_01x", "answer", {"meta": {"k": 1}})]))
    result = await ask("claude", open_meta)
    assert fake.violations == [] and result.parsed == {"meta": {"k": 1}}
    [claude_body] = bodies(fake, "claude")
    assert claude_body["tool_choice"] == {"type": "tool", "name": "answer"} and "output_config" not in claude_body
