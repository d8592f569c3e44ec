"""The Claude adapter: the same contract surface as Kimi (I1), over the Anthropic Messages API.

What differs from Kimi is tested here: x-api-key and anthropic-version headers, a top-level system
prompt, tools in Anthropic's own shape, and stop_reason passed through as Anthropic reports it.
Shared retry, network and redaction policy lives in test_retry_and_errors.py.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from _wire import (
    CLAUDE,
    CLAUDE_URL,
    KIMI,
    SECRET_CLAUDE_KEY,
    WEATHER_TOOL,
    WIRES,
    Upstream,
    Wire,
    claude_body,
    claude_text,
    claude_tool_use,
    json_reply,
    kimi_body,
    without_latency,
)

from colibri_router.adapters import (
    AnthropicConfigError,
    AnthropicTool,
    ClaudeCompletionOptions,
    CompletionResult,
    KimiCompletionOptions,
    create_claude_completion,
    create_claude_completion_with_tools,
)

LOG_LINE = "[claude] model={} prompt_tokens={} completion_tokens={} latency_ms={}"


def options(upstream: Upstream, **overrides: Any) -> ClaudeCompletionOptions:
    opts: ClaudeCompletionOptions = CLAUDE.opts(upstream, **overrides)
    return opts


async def complete(body: dict[str, Any], wire: Wire = "json", **overrides: Any) -> tuple[CompletionResult, Upstream]:
    upstream = Upstream.of(CLAUDE.answer(body, wire))
    return await create_claude_completion("What is the weather?", options(upstream, **overrides)), upstream


async def complete_with_tools(
    body: dict[str, Any], tools: list[AnthropicTool], wire: Wire = "json", **overrides: Any
) -> tuple[CompletionResult, Upstream]:
    upstream = Upstream.of(CLAUDE.answer(body, wire))
    result = await create_claude_completion_with_tools("What is the weather?", tools, options(upstream, **overrides))
    return result, upstream


@pytest.fixture(params=WIRES)
def wire(request: pytest.FixtureRequest) -> Wire:
    wire_name: Wire = request.param
    return wire_name


# --- I1: one result type for both adapters ------------------------------------------------------------------


async def test_i1_text_answer_maps_onto_the_completion_result(wire: Wire) -> None:
    result, _ = await complete(claude_body(claude_text("Sunny."), usage=(30, 4)), wire)

    assert type(result) is CompletionResult
    assert without_latency(result) == {
        "content": "Sunny.",
        "model": "claude-sonnet-4-5-20250929",
        "prompt_tokens": 30,
        "completion_tokens": 4,
        "stop_reason": "end_turn",
    }


async def test_i1_kimi_and_claude_return_the_identical_type() -> None:
    claude_result, _ = await complete(claude_body())
    kimi_upstream = Upstream.of(json_reply(kimi_body()))
    kimi_result = await KIMI.complete("hi", KIMI.opts(kimi_upstream))

    assert type(kimi_result) is type(claude_result) is CompletionResult
    assert list(CompletionResult.model_fields) == [
        "content",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "stop_reason",
    ]


def test_i1_options_have_the_same_fields_as_kimi() -> None:
    def names(cls: type) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    assert names(ClaudeCompletionOptions) == names(KimiCompletionOptions)


@pytest.mark.parametrize(
    "body",
    [
        claude_body(claude_text("plain text")),
        claude_body(claude_tool_use("toolu_01A", "get_weather", {"location": "London"}), stop_reason="tool_use"),
        claude_body(
            claude_text("Let me check."),
            claude_tool_use("toolu_01B", "get_weather", {"location": "Paris", "units": "c"}),
            stop_reason="tool_use",
        ),
        claude_body(claude_text("cut"), stop_reason="max_tokens", model=None),
    ],
    ids=["text", "tool-use", "text-and-tool-use", "no-model"],
)
async def test_i1_json_and_sse_answers_give_the_same_result(body: dict[str, Any]) -> None:
    from_json, _ = await complete_with_tools(body, [WEATHER_TOOL], "json")
    from_sse, _ = await complete_with_tools(body, [WEATHER_TOOL], "sse")

    assert without_latency(from_sse) == without_latency(from_json)


# --- I2 / I3 / I4: key and URL, read at call time -------------------------------------------------------------


async def test_i2_missing_key_raises_config_error_before_any_request() -> None:
    upstream = Upstream.of(json_reply(claude_body()))

    with pytest.raises(AnthropicConfigError) as caught:
        await create_claude_completion_with_tools("hi", [WEATHER_TOOL], options(upstream, api_key=None))

    assert caught.value.code == "ANTHROPIC_CONFIG_ERROR"
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert upstream.requests == []


async def test_i3_i4_environment_is_read_at_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = Upstream.of(json_reply(claude_body()), json_reply(claude_body()))
    opts = options(upstream, api_key=None)

    monkeypatch.setenv("ANTHROPIC_API_KEY", "first-key-1111")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://first.example")
    await create_claude_completion("hi", opts)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "second-key-2222")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://second.example/")
    await create_claude_completion("hi", opts)

    sent = [(str(r.url), r.headers["x-api-key"]) for r in upstream.requests]
    assert sent == [
        ("https://first.example/v1/messages", "first-key-1111"),
        ("https://second.example/v1/messages", "second-key-2222"),
    ]


async def test_i3_option_key_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key-1234")

    _, upstream = await complete(claude_body(), api_key="option-key-5678")

    assert upstream.requests[0].headers["x-api-key"] == "option-key-5678"


@pytest.mark.parametrize(
    ("option", "env", "expected"),
    [
        (None, None, CLAUDE_URL),
        (None, "", CLAUDE_URL),
        (None, "http://127.0.0.1:8080/anthropic", "http://127.0.0.1:8080/anthropic/v1/messages"),
        ("https://proxy.example", "http://127.0.0.1:8080/anthropic", "https://proxy.example/v1/messages"),
    ],
    ids=["default", "empty-env-is-unset", "env", "option-wins"],
)
async def test_i4_base_url_resolution(
    monkeypatch: pytest.MonkeyPatch, option: str | None, env: str | None, expected: str
) -> None:
    if env is not None:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", env)

    _, upstream = await complete(claude_body(), base_url=option)

    assert upstream.requests[0].method == "POST"
    assert str(upstream.requests[0].url) == expected


# --- I5 / I6 / I17 / I18: the request ---------------------------------------------------------------------


@pytest.fixture
def no_prompt_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The contract's request shape, without the cache breakpoints COLIBRI_PROMPT_CACHE=auto adds."""
    monkeypatch.setenv("COLIBRI_PROMPT_CACHE", "off")


@pytest.mark.usefixtures("no_prompt_cache")
async def test_i5_i6_defaults_are_claude_sonnet_4_5_and_1024_tokens() -> None:
    _, upstream = await complete(claude_body())

    assert upstream.body["model"] == "claude-sonnet-4-5"
    assert upstream.body["max_tokens"] == 1024
    assert upstream.body["stream"] is True
    assert upstream.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is the weather?"}]}
    ]


async def test_i5_i6_model_and_max_tokens_options_are_sent() -> None:
    _, upstream = await complete(claude_body(), model="claude-opus-4-1", max_tokens=99)

    assert (upstream.body["model"], upstream.body["max_tokens"]) == ("claude-opus-4-1", 99)


async def test_i17_key_goes_in_x_api_key_with_the_anthropic_version() -> None:
    _, upstream = await complete(claude_body())

    headers = upstream.requests[0].headers
    assert headers["x-api-key"] == SECRET_CLAUDE_KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers


@pytest.mark.usefixtures("no_prompt_cache")
async def test_i18_system_prompt_is_top_level() -> None:
    _, upstream = await complete(claude_body(), system_prompt="Answer in French.")

    assert upstream.body["system"] == "Answer in French."
    assert [m["role"] for m in upstream.body["messages"]] == ["user"]


async def test_i18_no_system_field_without_a_system_prompt() -> None:
    _, upstream = await complete(claude_body())

    assert "system" not in upstream.body


# --- I9: logging -----------------------------------------------------------------------------------------------


async def test_i9_success_logs_one_exact_claude_line(wire: Wire) -> None:
    result, upstream = await complete(claude_body(usage=(30, 4)), wire)

    assert upstream.logs == [LOG_LINE.format("claude-sonnet-4-5-20250929", 30, 4, result.latency_ms)]


async def test_i9_log_says_unknown_model_when_the_response_has_none(wire: Wire) -> None:
    result, upstream = await complete(claude_body(model=None, usage=(1, 2)), wire)

    assert upstream.logs == [LOG_LINE.format("unknown", 1, 2, result.latency_ms)]


# --- I10 / I19: tools on the request ---------------------------------------------------------------------


async def test_i10_empty_tools_list_sends_no_tools_key() -> None:
    _, upstream = await complete_with_tools(claude_body(), [])

    assert "tools" not in upstream.body
    assert "tool_choice" not in upstream.body


@pytest.mark.usefixtures("no_prompt_cache")
async def test_i19_tools_are_sent_in_anthropic_shape_with_the_schema_untouched() -> None:
    bare_tool: AnthropicTool = {"name": "ping", "input_schema": {"type": "object"}}

    _, upstream = await complete_with_tools(claude_body(), [WEATHER_TOOL, bare_tool])

    assert upstream.body["tools"] == [WEATHER_TOOL, bare_tool]


async def test_prompt_caching_marks_the_tools_the_system_prompt_and_the_last_user_turn() -> None:
    """COLIBRI_PROMPT_CACHE=auto (the default): three breakpoints; the tool schemas stay untouched."""
    _, upstream = await complete_with_tools(claude_body(), [WEATHER_TOOL], system_prompt="Be brief.")

    breakpoint_ = {"type": "ephemeral"}
    assert upstream.body["tools"] == [{**WEATHER_TOOL, "cache_control": breakpoint_}]
    assert upstream.body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": breakpoint_}]
    assert upstream.body["messages"][-1]["content"][-1]["cache_control"] == breakpoint_


# --- I11 / I13: the answer -----------------------------------------------------------------------------------


async def test_i11_tool_use_answer_becomes_the_json_of_its_blocks(wire: Wire) -> None:
    blocks = [
        claude_text("Checking both."),
        claude_tool_use("toolu_01A", "get_weather", {"location": "London"}),
        claude_tool_use("toolu_01B", "get_weather", {"location": "Paris", "nested": {"deep": [1, 2]}}),
    ]

    result, _ = await complete_with_tools(claude_body(*blocks, stop_reason="tool_use"), [WEATHER_TOOL], wire)

    assert json.loads(result.content) == blocks
    assert result.stop_reason == "tool_use"


async def test_i11_thinking_blocks_are_not_part_of_the_content() -> None:
    thinking = {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig"}

    result, _ = await complete(claude_body(thinking, claude_text("Sunny.")))

    assert result.content == "Sunny."


@pytest.mark.parametrize("stop_reason", ["end_turn", "max_tokens", "stop_sequence", "refusal", "pause_turn"])
async def test_i13_stop_reason_passes_through_as_reported(wire: Wire, stop_reason: str) -> None:
    result, _ = await complete(claude_body(stop_reason=stop_reason), wire)

    assert result.stop_reason == stop_reason


# --- I20 and determinism ---------------------------------------------------------------------------------


async def test_i20_tools_and_options_are_not_mutated() -> None:
    tools = [copy.deepcopy(WEATHER_TOOL)]
    tools_before = copy.deepcopy(tools)
    upstream = Upstream.of(json_reply(claude_body(claude_tool_use("toolu_1", "get_weather", {}))))
    opts = options(upstream, system_prompt="Be brief.", max_tokens=64)
    opts_before = {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)}

    await create_claude_completion_with_tools("hi", tools, opts)

    assert tools == tools_before
    assert {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)} == opts_before


async def test_determinism_same_mocks_give_the_same_result_and_request(wire: Wire) -> None:
    body = claude_body(claude_text("Both."), claude_tool_use("toolu_1", "get_weather", {"location": "Oslo"}))

    first, first_upstream = await complete_with_tools(body, [WEATHER_TOOL], wire, system_prompt="s")
    second, second_upstream = await complete_with_tools(body, [WEATHER_TOOL], wire, system_prompt="s")

    assert without_latency(first) == without_latency(second)
    assert first_upstream.requests[0].content == second_upstream.requests[0].content
