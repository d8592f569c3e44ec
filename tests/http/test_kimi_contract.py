"""The Kimi adapter against its contract (seeds/kimi-adapter-contract.md, I1-I20), over a mock upstream.

Every answer-mapping test runs twice: with the answer as a plain JSON body and as an SSE stream, since
the adapter asks for ``stream: true`` and must accept either. Retry, network and redaction policy,
shared with Claude, lives in test_retry_and_errors.py.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from _wire import (
    KIMI,
    KIMI_URL,
    SECRET_KEY,
    WEATHER_TOOL,
    WIRES,
    Upstream,
    Wire,
    json_reply,
    kimi_body,
    kimi_call,
    without_latency,
)
from pydantic import ValidationError

from colibri_router.adapters import (
    AnthropicTool,
    CompletionResult,
    KimiCompletionOptions,
    KimiConfigError,
    create_kimi_completion,
    create_kimi_completion_with_tools,
)

LOG_LINE = "[kimi] model={} prompt_tokens={} completion_tokens={} latency_ms={}"


def options(upstream: Upstream, **overrides: Any) -> KimiCompletionOptions:
    opts: KimiCompletionOptions = KIMI.opts(upstream, **overrides)
    return opts


async def complete(body: dict[str, Any], wire: Wire = "json", **overrides: Any) -> tuple[CompletionResult, Upstream]:
    """One plain completion answered with ``body``; the result and the upstream that saw it."""
    upstream = Upstream.of(KIMI.answer(body, wire))
    return await create_kimi_completion("What is the weather?", options(upstream, **overrides)), upstream


async def complete_with_tools(
    body: dict[str, Any], tools: list[AnthropicTool], wire: Wire = "json", **overrides: Any
) -> tuple[CompletionResult, Upstream]:
    upstream = Upstream.of(KIMI.answer(body, wire))
    result = await create_kimi_completion_with_tools("What is the weather?", tools, options(upstream, **overrides))
    return result, upstream


def tool_use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


@pytest.fixture(params=WIRES)
def wire(request: pytest.FixtureRequest) -> Wire:
    wire_name: Wire = request.param
    return wire_name


# --- I1: the result ------------------------------------------------------------------------------------------


async def test_i1_text_answer_maps_onto_the_completion_result(wire: Wire) -> None:
    result, _ = await complete(kimi_body("Sunny, 21 °C", usage=(42, 9)), wire)

    assert type(result) is CompletionResult
    assert without_latency(result) == {
        "content": "Sunny, 21 °C",
        "model": "kimi-k2-0905-preview",
        "prompt_tokens": 42,
        "completion_tokens": 9,
        "stop_reason": "end_turn",
    }
    assert isinstance(result.latency_ms, int)
    assert result.latency_ms >= 0


async def test_i1_result_is_frozen() -> None:
    result, _ = await complete(kimi_body())

    with pytest.raises(ValidationError):
        result.content = "changed"


@pytest.mark.parametrize(
    "body",
    [
        kimi_body("plain text"),
        kimi_body(None, tool_calls=[kimi_call("call_001", "get_weather", '{"location": "London"}')]),
        kimi_body("Let me check.", tool_calls=[kimi_call("functions.get_weather:0", "get_weather", "{}")]),
        kimi_body("cut off", finish_reason="length", model=None),
    ],
    ids=["text", "tool-call", "text-and-tool-call", "no-model"],
)
async def test_i1_json_and_sse_answers_give_the_same_result(body: dict[str, Any]) -> None:
    from_json, _ = await complete_with_tools(body, [WEATHER_TOOL], "json")
    from_sse, _ = await complete_with_tools(body, [WEATHER_TOOL], "sse")

    assert without_latency(from_sse) == without_latency(from_json)


# --- I2 / I3: keys, read at call time ----------------------------------------------------------------------


def test_i2_importing_with_an_empty_environment_does_not_raise() -> None:
    code = "import colibri_router.adapters, colibri_router.server, colibri_router.cli"
    run = subprocess.run(
        [sys.executable, "-c", code], env={"PATH": os.defpath}, capture_output=True, text=True, timeout=60, check=False
    )

    assert run.returncode == 0, run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize("with_tools", [False, True], ids=["plain", "with-tools"])
async def test_i2_missing_key_raises_config_error_before_any_request(with_tools: bool) -> None:
    upstream = Upstream.of(json_reply(kimi_body()))
    opts = options(upstream, api_key=None)

    if with_tools:
        call = create_kimi_completion_with_tools("hi", [WEATHER_TOOL], opts)
    else:
        call = create_kimi_completion("hi", opts)

    with pytest.raises(KimiConfigError) as caught:
        await call

    assert caught.value.code == "KIMI_CONFIG_ERROR"
    assert "COLIBRI_KIMI_API_KEY" in str(caught.value)
    assert upstream.requests == []


async def test_i2_an_empty_key_variable_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "")

    with pytest.raises(KimiConfigError):
        await create_kimi_completion("hi", options(Upstream(), api_key=None))


async def test_i2_config_error_needs_no_options_at_all() -> None:
    with pytest.raises(KimiConfigError):
        await create_kimi_completion("hi")


async def test_i3_option_key_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "env-key-1234")
    upstream = Upstream.of(json_reply(kimi_body()))

    await create_kimi_completion("hi", options(upstream, api_key="option-key-5678"))

    assert upstream.requests[0].headers["authorization"] == "Bearer option-key-5678"


async def test_i3_environment_key_is_used_without_an_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "env-key-1234")
    upstream = Upstream.of(json_reply(kimi_body()))

    await create_kimi_completion("hi", options(upstream, api_key=None))

    assert upstream.requests[0].headers["authorization"] == "Bearer env-key-1234"


async def test_i3_i4_environment_is_read_at_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = Upstream.of(json_reply(kimi_body()), json_reply(kimi_body()))
    opts = options(upstream, api_key=None)

    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "first-key-1111")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", "https://first.example/v1")
    await create_kimi_completion("hi", opts)
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "second-key-2222")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", "https://second.example/v1")
    await create_kimi_completion("hi", opts)

    sent = [(str(r.url), r.headers["authorization"]) for r in upstream.requests]
    assert sent == [
        ("https://first.example/v1/chat/completions", "Bearer first-key-1111"),
        ("https://second.example/v1/chat/completions", "Bearer second-key-2222"),
    ]


# --- I4: base URL -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "env", "expected"),
    [
        (None, None, KIMI_URL),
        (None, "", KIMI_URL),
        (None, "http://127.0.0.1:8080/kimi/v1", "http://127.0.0.1:8080/kimi/v1/chat/completions"),
        ("https://proxy.example/v1", "http://127.0.0.1:8080/kimi/v1", "https://proxy.example/v1/chat/completions"),
        ("https://proxy.example/v1/", None, "https://proxy.example/v1/chat/completions"),
    ],
    ids=["default", "empty-env-is-unset", "env", "option-wins", "trailing-slash"],
)
async def test_i4_base_url_resolution(
    monkeypatch: pytest.MonkeyPatch, option: str | None, env: str | None, expected: str
) -> None:
    if env is not None:
        monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", env)

    _, upstream = await complete(kimi_body(), base_url=option)

    assert upstream.requests[0].method == "POST"
    assert str(upstream.requests[0].url) == expected


# --- I5 / I6: defaults ----------------------------------------------------------------------------------------


async def test_i5_default_model_is_kimi_k2_0905_preview() -> None:
    _, upstream = await complete(kimi_body())

    assert upstream.body["model"] == "kimi-k2-0905-preview"


async def test_i5_model_option_is_sent() -> None:
    _, upstream = await complete(kimi_body(), model="kimi-k2-turbo-preview")

    assert upstream.body["model"] == "kimi-k2-turbo-preview"


async def test_i6_default_max_tokens_is_1024() -> None:
    _, upstream = await complete(kimi_body())

    assert upstream.body["max_tokens"] == 1024


async def test_i6_max_tokens_option_is_sent() -> None:
    _, upstream = await complete(kimi_body(), max_tokens=77)

    assert upstream.body["max_tokens"] == 77


async def test_request_asks_for_a_stream_with_one_user_message() -> None:
    _, upstream = await complete(kimi_body())

    assert upstream.body["stream"] is True
    assert upstream.body["messages"] == [{"role": "user", "content": "What is the weather?"}]
    assert upstream.requests[0].headers["content-type"] == "application/json"


# --- I9: logging --------------------------------------------------------------------------------------------


async def test_i9_success_logs_one_exact_line_to_the_injected_logger(wire: Wire) -> None:
    result, upstream = await complete(kimi_body(usage=(42, 9)), wire)

    assert upstream.logs == [LOG_LINE.format("kimi-k2-0905-preview", 42, 9, result.latency_ms)]


async def test_i9_log_says_unknown_model_when_the_response_has_none(wire: Wire) -> None:
    result, upstream = await complete(kimi_body(model=None, usage=(3, 4)), wire)

    assert upstream.logs == [LOG_LINE.format("unknown", 3, 4, result.latency_ms)]


async def test_i9_nothing_is_logged_on_failure() -> None:
    upstream = Upstream.of(KIMI.error(400))

    with pytest.raises(KIMI.api_error):
        await create_kimi_completion("hi", options(upstream))

    assert upstream.logs == []


@pytest.fixture
def fresh_structlog() -> Iterator[None]:
    """structlog unconfigured, so the adapter's default logger binds to this test's (captured) stderr."""
    saved, was_configured = structlog.get_config(), structlog.is_configured()
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
    if was_configured:
        structlog.configure(**saved)


@pytest.mark.usefixtures("fresh_structlog")
async def test_i9_default_logger_writes_to_stderr_never_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    upstream = Upstream.of(json_reply(kimi_body(usage=(5, 6))))
    opts = KimiCompletionOptions(api_key=SECRET_KEY, http_client=upstream.client(), sleep=upstream.sleep)

    result = await create_kimi_completion("hi", opts)

    captured = capsys.readouterr()
    assert captured.out == ""
    assert LOG_LINE.format("kimi-k2-0905-preview", 5, 6, result.latency_ms) in captured.err
    assert SECRET_KEY not in captured.err


# --- I10 / I19: tools on the request -------------------------------------------------------------------------


async def test_i10_empty_tools_list_sends_no_tools_key() -> None:
    _, upstream = await complete_with_tools(kimi_body(), [])

    assert "tools" not in upstream.body
    assert "tool_choice" not in upstream.body


async def test_i19_tools_become_function_descriptors_with_the_schema_untouched() -> None:
    bare_tool: AnthropicTool = {"name": "ping", "input_schema": {"type": "object"}}

    _, upstream = await complete_with_tools(kimi_body(), [WEATHER_TOOL, bare_tool])

    assert upstream.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather for a city",
                "parameters": WEATHER_TOOL["input_schema"],
            },
        },
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}},
    ]
    assert upstream.body["tool_choice"] == "auto"


# --- I11 / I12 / I13: the answer ------------------------------------------------------------------------------


async def test_i11_tool_calls_become_anthropic_tool_use_blocks(wire: Wire) -> None:
    calls = [
        kimi_call("call_001", "get_weather", '{"location": "London"}'),
        kimi_call("functions.get_weather:1", "get_weather", '{"location": "Paris", "units": "c"}'),
    ]

    result, _ = await complete_with_tools(kimi_body(None, tool_calls=calls), [WEATHER_TOOL], wire)

    assert json.loads(result.content) == [
        tool_use("call_001", "get_weather", {"location": "London"}),
        tool_use("functions.get_weather:1", "get_weather", {"location": "Paris", "units": "c"}),
    ]
    assert result.stop_reason == "tool_use"


async def test_i11_text_next_to_tool_calls_leads_as_a_text_block(wire: Wire) -> None:
    body = kimi_body("Checking London.", tool_calls=[kimi_call("functions.get_weather:0", "get_weather", "{}")])

    result, _ = await complete_with_tools(body, [WEATHER_TOOL], wire)

    assert json.loads(result.content) == [
        {"type": "text", "text": "Checking London."},
        tool_use("functions.get_weather:0", "get_weather", {}),
    ]


async def test_i11_content_is_compact_json_that_keeps_non_ascii() -> None:
    body = kimi_body(None, tool_calls=[kimi_call("call_001", "get_weather", '{"location": "Zürich"}')])

    result, _ = await complete_with_tools(body, [WEATHER_TOOL])

    expected = [tool_use("call_001", "get_weather", {"location": "Zürich"})]
    assert result.content == json.dumps(expected, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("arguments", ["", None], ids=["empty-string", "null"])
async def test_i12_empty_arguments_become_an_empty_input(wire: Wire, arguments: str | None) -> None:
    body = kimi_body(None, tool_calls=[kimi_call("call_001", "get_weather", arguments)])

    result, _ = await complete_with_tools(body, [WEATHER_TOOL], wire)

    assert json.loads(result.content) == [tool_use("call_001", "get_weather", {})]


async def test_i12_unparseable_arguments_are_kept_raw_and_never_raise(wire: Wire) -> None:
    raw = '{"location": "Lond'
    body = kimi_body(None, tool_calls=[kimi_call("call_001", "get_weather", raw)], finish_reason="length")

    result, _ = await complete_with_tools(body, [WEATHER_TOOL], wire)

    [block] = json.loads(result.content)
    assert block["input"]["_raw"] == raw
    assert isinstance(block["input"]["_parse_error"], str)
    assert block["input"]["_parse_error"]
    assert set(block["input"]) == {"_parse_error", "_raw"}


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_use"),
        ("insufficient_system_resource", "insufficient_system_resource"),
    ],
)
async def test_i13_finish_reason_is_normalized(wire: Wire, finish_reason: str, stop_reason: str) -> None:
    result, _ = await complete(kimi_body("text", finish_reason=finish_reason), wire)

    assert result.stop_reason == stop_reason


async def test_i13_tool_calls_mean_tool_use_even_when_finish_reason_says_stop(wire: Wire) -> None:
    body = kimi_body(None, tool_calls=[kimi_call("call_001", "get_weather", "{}")], finish_reason="stop")

    result, _ = await complete_with_tools(body, [WEATHER_TOOL], wire)

    assert result.stop_reason == "tool_use"


# --- I14: injection seams ---------------------------------------------------------------------------------


async def test_i14_http_client_sleep_and_logger_are_all_injected() -> None:
    upstream = Upstream.of(KIMI.error(503), json_reply(kimi_body()))

    await create_kimi_completion("hi", options(upstream))

    assert len(upstream.requests) == 2  # the injected client carried both attempts
    assert upstream.sleeps == [0.1]  # the injected sleep, in seconds
    assert len(upstream.logs) == 1  # the injected logger


def test_i14_options_are_frozen_and_keyword_only() -> None:
    opts = KimiCompletionOptions(model="m")

    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.model = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        KimiCompletionOptions("m")  # type: ignore[call-arg]
    assert {f.name for f in dataclasses.fields(KimiCompletionOptions)} == {
        "model",
        "max_tokens",
        "system_prompt",
        "api_key",
        "base_url",
        "http_client",
        "logger",
        "sleep",
        "timeout_s",
    }


# --- I17 / I18: headers and system prompt --------------------------------------------------------------


async def test_i17_key_goes_in_a_bearer_authorization_header_only() -> None:
    _, upstream = await complete(kimi_body())

    headers = upstream.requests[0].headers
    assert headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert "x-api-key" not in headers


async def test_i18_system_prompt_is_a_leading_system_message() -> None:
    _, upstream = await complete(kimi_body(), system_prompt="Answer in French.")

    assert upstream.body["messages"] == [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "What is the weather?"},
    ]
    assert "system" not in upstream.body


async def test_i18_no_system_message_without_a_system_prompt() -> None:
    _, upstream = await complete(kimi_body())

    assert [m["role"] for m in upstream.body["messages"]] == ["user"]


# --- I20 and determinism ------------------------------------------------------------------------------------


async def test_i20_tools_and_options_are_not_mutated() -> None:
    tools: list[AnthropicTool] = [copy.deepcopy(WEATHER_TOOL), {"name": "ping", "input_schema": {"type": "object"}}]
    tools_before = copy.deepcopy(tools)
    schema_object = tools[0]["input_schema"]
    upstream = Upstream.of(json_reply(kimi_body(None, tool_calls=[kimi_call("call_001", "ping", "{}")])))
    opts = options(upstream, system_prompt="Be brief.", model="kimi-k2-0905-preview", max_tokens=64)
    opts_before = {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)}

    await create_kimi_completion_with_tools("hi", tools, opts)

    assert tools == tools_before
    assert tools[0]["input_schema"] is schema_object
    assert {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)} == opts_before


async def test_determinism_same_mocks_give_the_same_result_and_request(wire: Wire) -> None:
    body = kimi_body("Both.", tool_calls=[kimi_call("call_001", "get_weather", '{"location": "Oslo"}')])

    first, first_upstream = await complete_with_tools(body, [WEATHER_TOOL], wire, system_prompt="s")
    second, second_upstream = await complete_with_tools(body, [WEATHER_TOOL], wire, system_prompt="s")

    assert without_latency(first) == without_latency(second)
    assert first_upstream.requests[0].content == second_upstream.requests[0].content


# --- I15: the fold-in ---------------------------------------------------------------------------------------


def test_i15_fold_in_re_exports_every_public_name() -> None:
    import colibri_router.adapters as fold_in
    from colibri_router import errors
    from colibri_router.adapters import claude, kimi

    contract_names = {
        "create_kimi_completion": kimi.create_kimi_completion,
        "create_kimi_completion_with_tools": kimi.create_kimi_completion_with_tools,
        "KimiCompletionOptions": kimi.KimiCompletionOptions,
        "KimiConfigError": errors.KimiConfigError,
        "KimiApiError": errors.KimiApiError,
        "create_claude_completion": claude.create_claude_completion,
        "create_claude_completion_with_tools": claude.create_claude_completion_with_tools,
        "ClaudeCompletionOptions": claude.ClaudeCompletionOptions,
        "AnthropicConfigError": errors.AnthropicConfigError,
        "AnthropicApiError": errors.AnthropicApiError,
        "CompletionResult": CompletionResult,
    }

    assert set(contract_names) <= set(fold_in.__all__)
    for name, original in contract_names.items():
        assert getattr(fold_in, name) is original, name
    missing = [name for name in fold_in.__all__ if not hasattr(fold_in, name)]
    assert missing == []
    assert {"kimi", "claude", "openai", "mistral", "openrouter", "vllm", "lmstudio"} <= set(fold_in.PROVIDERS)
