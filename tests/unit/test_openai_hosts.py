"""The OpenAI wire on every host: each host quirk and model-profile rule (PROVIDER-FACTS.md §1, §3, §6,
§7 and the fixtures of §8.4), from encode through a real stream and the transport to decode."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.adapters import run_completion
from colibri_router.conversation import (
    CompletionRequest,
    Message,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
)
from colibri_router.engine.transport import http_error
from colibri_router.errors import ApiError
from colibri_router.progress import CallProgress
from colibri_router.providers import BUILTIN, Connection
from colibri_router.retry import Deadline, RetryPolicy
from colibri_router.toolcalls.ids import ids_for_mistral, ids_for_openai
from colibri_router.wires import WireCodec, codec_for
from colibri_router.wires.openai.assembly import OpenAIStreamAssembler
from colibri_router.wires.openai.messages import TOOL_RESULTS_BRIDGE

TOOL = ToolSpec("lookup", {"type": "object", "properties": {"q": {"type": "string"}}})
FOREIGN_ID = "functions.lookup:0-from-another-provider-with-a-long-suffix"


def codec(provider: str, model: str) -> WireCodec:
    return codec_for(BUILTIN[provider], model)


def request(model: str, *messages: Message, **fields: Any) -> CompletionRequest:
    history = messages or (Message("user", (Text("hi"),)),)
    return CompletionRequest(model=model, messages=history, max_tokens=64, **fields)


def loop_history(call_id: str = FOREIGN_ID, *, reasoning: bool = True) -> tuple[Message, ...]:
    thinking = (Thinking("plan"),) if reasoning else ()
    return (
        Message("user", (Text("find it"),)),
        Message("assistant", (*thinking, ToolCall(call_id, "lookup", {"q": "x"}))),
        Message("user", (ToolResult(call_id, "found"), Text("thanks, go on"))),
    )


def encode(provider: str, model: str, *messages: Message, **fields: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
    encoded = codec(provider, model).encode(request(model, *messages, **fields))
    return encoded.body, encoded.warnings


# --- OpenAI ------------------------------------------------------------------------------------------------


def test_openai_sends_max_completion_tokens_and_asks_for_usage() -> None:
    body, _ = encode("openai", "gpt-4.1-mini", temperature=0.3)
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.3


def test_openai_reasoning_models_get_no_temperature(caplog: pytest.LogCaptureFixture) -> None:
    """Q-openai-reasoning-params."""
    body, warnings = encode("openai", "gpt-5.4-mini", temperature=0.2)
    assert "temperature" not in body
    assert body["max_completion_tokens"] == 64
    assert any("temperature not sent" in w for w in warnings)


def test_openai_reasoning_models_get_max_completion_tokens_on_hosts_that_follow_the_model() -> None:
    body, _ = encode("groq", "openai/o4-mini")
    assert "max_completion_tokens" in body
    body, _ = encode("openrouter", "openai/o4-mini")  # OpenRouter takes only max_tokens
    assert "max_tokens" in body and "max_completion_tokens" not in body


def test_openai_ids_are_at_most_40_safe_characters_on_both_sides() -> None:
    """Q-openai-id-length."""
    body, _ = encode("openai", "gpt-4.1", *loop_history())
    call_id = body["messages"][1]["tool_calls"][0]["id"]
    assert len(call_id) <= 40
    assert all(c.isalnum() or c in "_-" for c in call_id)
    assert body["messages"][2] == {"role": "tool", "tool_call_id": call_id, "content": "found"}


def test_openai_tool_results_come_before_the_user_text() -> None:
    """Q-openai-tool-order."""
    body, _ = encode("openai", "gpt-4.1", *loop_history())
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "user"]


def test_openai_does_not_get_reasoning_replayed() -> None:
    body, _ = encode("openai", "gpt-4.1", *loop_history())
    assert set(body["messages"][1]) == {"role", "content", "tool_calls"}


@given(st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=8))
def test_openai_ids_stay_valid_distinct_and_bound(raw_ids: list[str]) -> None:
    history = tuple(Message("assistant", (ToolCall(raw, "t", {}),)) for raw in raw_ids)
    ids = [m.parts[0].id for m in ids_for_openai(history)]  # type: ignore[union-attr]
    assert len(set(ids)) == len(ids)
    assert all(1 <= len(i) <= 40 and all(c.isalnum() or c in "_-" for c in i) for i in ids)


# --- Mistral -----------------------------------------------------------------------------------------------


def test_mistral_gets_only_documented_fields() -> None:
    """Q-mistral-extra-fields."""
    body, _ = encode("mistral", "mistral-large-latest", *loop_history(), tools=(TOOL,))
    assert set(body) == {"model", "messages", "max_tokens", "tools", "tool_choice", "stream"}
    assert all("reasoning_content" not in message for message in body["messages"])


def test_mistral_ids_are_nine_alphanumerics_on_both_sides() -> None:
    """Q-mistral-id-9."""
    body, _ = encode("mistral", "mistral-large-latest", *loop_history("call_abcdefghijklmnopqrstuvwx"))
    call_id = body["messages"][1]["tool_calls"][0]["id"]
    assert len(call_id) == 9 and call_id.isalnum() and call_id.isascii()
    assert body["messages"][2]["tool_call_id"] == call_id


def test_mistral_models_get_nine_character_ids_on_other_hosts_too() -> None:
    body, _ = encode("vllm", "mistralai/Mistral-Small-3.2-24B-Instruct", *loop_history())
    assert len(body["messages"][1]["tool_calls"][0]["id"]) == 9


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=12))
def test_mistral_ids_are_always_nine_alphanumerics_and_distinct(raw_ids: list[str]) -> None:
    history = tuple(Message("assistant", (ToolCall(raw, "t", {}),)) for raw in raw_ids)
    ids = [m.parts[0].id for m in ids_for_mistral(history)]  # type: ignore[union-attr]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 9 and i.isascii() and i.isalnum() for i in ids)
    assert ids == [m.parts[0].id for m in ids_for_mistral(history)]  # type: ignore[union-attr]  # deterministic


def test_mistral_never_gets_a_user_message_right_after_a_tool_message() -> None:
    """Q-mistral-user-after-tool."""
    body, _ = encode("mistral", "mistral-large-latest", *loop_history())
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert body["messages"][3]["content"] == TOOL_RESULTS_BRIDGE


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (ToolChoice("required"), "any"),
        (ToolChoice("tool", "lookup"), {"type": "function", "function": {"name": "lookup"}}),
        (ToolChoice("auto"), "auto"),
    ],
)
def test_mistral_tool_choice(choice: ToolChoice, expected: object) -> None:
    body, _ = encode("mistral", "mistral-large-latest", tools=(TOOL,), tool_choice=choice)
    assert body["tool_choice"] == expected


def test_mistral_tool_choice_none_leaves_the_tools_out() -> None:
    body, warnings = encode("mistral", "mistral-large-latest", tools=(TOOL,), tool_choice=ToolChoice("none"))
    assert "tools" not in body and "tool_choice" not in body
    assert any("tools were left out" in w for w in warnings)


# --- reasoning replay per host -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model", "field"),
    [
        ("kimi", "kimi-k2.6", "reasoning_content"),
        ("siliconflow", "moonshotai/Kimi-K2.5", "reasoning_content"),
        ("openrouter", "moonshotai/kimi-k2.6", "reasoning"),
        ("together", "moonshotai/Kimi-K2-Thinking", "reasoning"),
        ("vllm", "moonshotai/Kimi-K2-Thinking", "reasoning"),
        ("fireworks", "accounts/fireworks/models/kimi-k2p6", "reasoning_content"),
    ],
)
def test_kimi_thinking_models_get_their_reasoning_replayed_in_the_hosts_field(
    provider: str, model: str, field: str
) -> None:
    """Q-kimi-reasoning-replay and Q-reasoning-field; history from another provider gets a placeholder."""
    body, _ = encode(provider, model, *loop_history())
    assistant = body["messages"][1]
    assert assistant[field] == "plan"
    assert assistant["tool_calls"][0]["id"] == "functions.lookup:0"  # K2 IDs on every host
    body, warnings = encode(provider, model, *loop_history(reasoning=False))
    assert body["messages"][1][field] == "(reasoning for this step was not recorded)"
    assert any("placeholder" in w for w in warnings)


def test_kimi_on_any_host_keeps_the_tool_choice_nudge_and_tool_limit() -> None:
    body, warnings = encode(
        "together", "moonshotai/Kimi-K2-Instruct", tools=(TOOL,), tool_choice=ToolChoice("required")
    )
    assert body["tool_choice"] == "auto"
    assert body["messages"][-1]["role"] == "user"
    assert warnings
    with pytest.raises(Exception, match="at most 128 tools"):
        encode("openrouter", "moonshotai/kimi-k2", tools=tuple(ToolSpec(f"t{i}", {}) for i in range(129)))


# --- streams through the transport --------------------------------------------------------------------------


def sse(*chunks: object, done: bool = True, comments: bool = False) -> bytes:
    frames = []
    for chunk in chunks:
        if comments:
            frames.append(": OPENROUTER PROCESSING\n\n")
        frames.append(chunk if isinstance(chunk, str) else f"data: {json.dumps(chunk)}\n\n")
    if done:
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


async def call(
    provider: str,
    model: str,
    respond: Callable[[httpx.Request], httpx.Response],
    *,
    tools: Sequence[ToolSpec] = (TOOL,),
) -> Any:
    transport = httpx.MockTransport(respond)
    async with httpx.AsyncClient(transport=transport) as client:
        return await run_completion(
            codec(provider, model),
            request(model, tools=tuple(tools)),
            Connection(api_key="k", base_url="http://upstream.test/v1"),
            deadline=Deadline.after(10),
            progress=CallProgress(provider),
            client=client,
            retry=RetryPolicy(max_attempts=1),
        )


def stream_reply(body: bytes, content_type: str = "text/event-stream") -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(200, content=body, headers={"content-type": content_type})


async def test_usage_in_the_tail_chunk_after_the_finish_chunk_is_read() -> None:
    """Q-usage-tail."""
    body = sse(
        chunk({"role": "assistant", "content": "hi"}),
        chunk({}, "stop"),
        {"id": "c1", "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}},
    )
    completion = await call("openai", "gpt-4.1", stream_reply(body))
    assert (completion.turn.usage.prompt_tokens, completion.turn.usage.completion_tokens) == (7, 2)


async def test_openrouter_comment_lines_are_skipped() -> None:
    """Q-openrouter-comment."""
    body = sse(chunk({"content": "a"}), chunk({"content": "b"}, "stop"), comments=True)
    completion = await call("openrouter", "moonshotai/kimi-k2", stream_reply(body))
    assert completion.turn.text() == "ab"


async def test_openrouter_error_after_a_200_is_an_api_error_never_a_truncated_success() -> None:
    """Q-openrouter-midstream."""
    failing = {"error": {"code": 502, "message": "upstream died"}, "choices": [{"delta": {}, "finish_reason": "error"}]}
    body = sse(chunk({"content": "partial"}), failing, done=False)
    with pytest.raises(ApiError) as caught:
        await call("openrouter", "moonshotai/kimi-k2", stream_reply(body))
    assert caught.value.code == "OPENROUTER_API_ERROR"
    assert "upstream died" in caught.value.message
    bare = sse(chunk({"content": "partial"}), chunk({}, "error"), done=False)
    with pytest.raises(ApiError, match="finish_reason 'error'"):
        await call("openrouter", "moonshotai/kimi-k2", stream_reply(bare))


async def test_openrouter_errors_are_reported_with_the_upstream_message() -> None:
    """Q-openrouter-raw."""
    raw = json.dumps({"error": {"message": "thinking is enabled but reasoning_content is missing"}})
    error = {
        "error": {
            "code": 400,
            "message": "Provider returned error",
            "metadata": {"raw": raw, "provider_name": "Moonshot AI"},
        }
    }
    with pytest.raises(ApiError) as caught:
        await call("openrouter", "moonshotai/kimi-k2", lambda _: httpx.Response(400, json=error))
    assert "Provider returned error (Moonshot AI): thinking is enabled" in caught.value.message
    assert not caught.value.retryable


async def test_a_body_without_choices_is_an_explicit_error() -> None:
    """Q-openrouter-null-choices."""
    with pytest.raises(ApiError, match="malformed response body"):
        await call("openrouter", "moonshotai/kimi-k2", lambda _: httpx.Response(200, json={"choices": None}))


async def test_groq_usage_under_x_groq_is_read() -> None:
    """Q-groq-xgroq-usage."""
    body = sse(
        chunk({"content": "ok"}), chunk({}, "stop", x_groq={"usage": {"prompt_tokens": 5, "completion_tokens": 1}})
    )
    completion = await call("groq", "llama-3.3-70b-versatile", stream_reply(body))
    assert completion.turn.usage.prompt_tokens == 5


async def test_groq_error_event_mid_stream_is_an_api_error() -> None:
    """Q-groq-sse-error."""
    failure = {
        "error": {"message": "Failed to call a function.", "type": "invalid_request_error", "code": "tool_use_failed"}
    }
    event = f"event: error\ndata: {json.dumps(failure)}\n\n"
    body = sse(chunk({"content": "x"}), event, done=False)
    with pytest.raises(ApiError) as caught:
        await call("groq", "llama-3.3-70b-versatile", stream_reply(body))
    assert caught.value.code == "GROQ_API_ERROR"
    assert "Failed to call a function" in caught.value.message


@pytest.mark.parametrize(
    "error_body",
    [
        {
            "object": "error",
            "message": "This model's maximum context length is 8192 tokens",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens",
                "type": "BadRequestError",
                "code": 400,
            }
        },
    ],
    ids=["flat", "nested"],
)
async def test_vllm_error_bodies_of_both_shapes_are_read(error_body: dict[str, Any]) -> None:
    """Q-vllm-error-shapes."""
    with pytest.raises(ApiError) as caught:
        await call("vllm", "moonshotai/Kimi-K2-Instruct", lambda _: httpx.Response(400, json=error_body))
    assert caught.value.code == "VLLM_API_ERROR"
    assert "maximum context length is 8192 tokens" in caught.value.message
    assert caught.value.error_type == "BadRequestError"


def test_openai_quota_is_not_retried_but_rate_limits_are() -> None:
    """Q-openai-quota-vs-rate; retry-after-ms is honoured like Retry-After."""
    quota = {
        "error": {
            "message": "You exceeded your current quota",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        }
    }
    rate = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    openai = codec("openai", "gpt-4.1")
    refused = http_error(httpx.Response(429, json=quota), openai)
    assert not refused.retryable
    assert refused.error_type == "insufficient_quota"
    limited = http_error(httpx.Response(429, json=rate, headers={"retry-after-ms": "250"}), openai)
    assert limited.retryable
    assert limited.retry_after == 0.25
    moonshot = {"error": {"message": "your balance is exhausted", "type": "exceeded_current_quota_error"}}
    assert not http_error(httpx.Response(429, json=moonshot), codec("kimi", "kimi-k2.6")).retryable


async def test_mistral_422_says_which_field_was_refused() -> None:
    detail = {
        "object": "error",
        "message": {
            "detail": [
                {"type": "extra_forbidden", "loc": ["body", "stream_options"], "msg": "Extra inputs are not permitted"}
            ]
        },
        "type": "invalid_request_error",
    }
    with pytest.raises(ApiError, match="stream_options: Extra inputs are not permitted"):
        await call("mistral", "mistral-large-latest", lambda _: httpx.Response(422, json=detail))


async def test_ndjson_chunks_are_assembled_like_sse() -> None:
    lines = [chunk({"content": "nd"}), chunk({"content": "json"}, "stop")]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    completion = await call("vllm", "m", stream_reply(body, "application/x-ndjson"))
    assert completion.turn.text() == "ndjson"


async def test_a_stream_under_a_wrong_content_type_is_still_a_stream() -> None:
    body = sse(chunk({"content": "still "}), chunk({"content": "streamed"}, "stop"))
    completion = await call("lmstudio", "m", stream_reply(body, "application/json"))
    assert completion.turn.text() == "still streamed"


# --- assembly quirks ------------------------------------------------------------------------------------------


def assemble(*payloads: dict[str, Any]) -> dict[str, Any]:
    assembler = OpenAIStreamAssembler()
    for payload in payloads:
        assembler.feed("", json.dumps(payload))
    assembler.feed("", "[DONE]")
    return assembler.result()


def test_empty_name_continuations_keep_the_first_name() -> None:
    """Q-empty-name-continuation (LM Studio)."""
    body = assemble(
        chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "lookup", "arguments": '{"q"'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "", "arguments": ': "x"}'}}]}, "tool_calls"),
    )
    [call_body] = body["choices"][0]["message"]["tool_calls"]
    assert call_body["function"] == {"name": "lookup", "arguments": '{"q": "x"}'}


def test_a_missing_or_null_stream_id_stays_empty_for_the_router_to_name() -> None:
    """Q-missing-stream-id and Q-mistral-literal-null-id."""
    body = assemble(
        chunk({"tool_calls": [{"index": 0, "id": "null", "function": {"name": "a", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"name": "b", "arguments": "{}"}}]}, "tool_calls"),
    )
    assert [c["id"] for c in body["choices"][0]["message"]["tool_calls"]] == ["", ""]


def test_whole_call_chunks_are_emitted_once() -> None:
    """Q-whole-call-chunk."""
    whole = {"index": 0, "id": "abcdefghi", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
    body = assemble(chunk({"tool_calls": [whole]}, "tool_calls"))
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"q": "x"}'


def test_mistral_thinking_chunks_then_text() -> None:
    """Q-mistral-thinking-list."""
    body = assemble(
        chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "let me "}]}]}),
        chunk(
            {
                "content": [
                    {"type": "thinking", "thinking": [{"type": "text", "text": "see"}]},
                    {"type": "text", "text": "The "},
                ]
            }
        ),
        chunk({"content": "answer"}, "stop"),
    )
    message = body["choices"][0]["message"]
    assert (message["reasoning_content"], message["content"]) == ("let me see", "The answer")


def test_reasoning_arrives_under_either_name() -> None:
    """Q-reasoning-field."""
    body = assemble(chunk({"reasoning": "hm"}), chunk({"reasoning_content": "m"}), chunk({"content": "x"}, "stop"))
    assert body["choices"][0]["message"]["reasoning_content"] == "hmm"


def test_k2_markers_inside_reasoning_become_calls() -> None:
    """Q-kimi-marker-in-reasoning."""
    markers = (
        "thinking...<|tool_calls_section_begin|><|tool_call_begin|>functions.lookup:0"
        '<|tool_call_argument_begin|>{"q": "x"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    body = assemble(chunk({"reasoning_content": markers}, "stop"))
    turn = codec("kimi", "kimi-k2-thinking").decode(body, request("kimi-k2-thinking", tools=(TOOL,)))
    assert turn.thinking() == "thinking..."
    assert [(c.name, dict(c.arguments)) for c in turn.tool_calls()] == [("lookup", {"q": "x"})]
    assert turn.stop_reason == "tool_use"


# --- the one reasoning control, and Claude's thinking replay -------------------------------------------------


def test_claude_thinking_blocks_go_back_unchanged_before_the_tool_use() -> None:
    from colibri_router.conversation import RedactedThinking

    history = (
        Message("user", (Text("go"),)),
        Message(
            "assistant",
            (
                Thinking("plan", signature="sig-1"),
                RedactedThinking("opaque=="),
                ToolCall("toolu_1", "lookup", {"q": "x"}),
            ),
        ),
        Message("user", (ToolResult("toolu_1", "found"),)),
    )
    body, warnings = encode("claude", "claude-sonnet-4-5", *history, tools=(TOOL,), reasoning="low", temperature=0.5)
    assert body["messages"][1]["content"][:2] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque=="},
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert body["max_tokens"] > 1024  # raised above the budget
    assert "temperature" not in body
    assert any("max_tokens raised" in w for w in warnings)
    # Another provider never sees Claude's opaque reasoning.
    openai_body, _ = encode("openai", "gpt-4.1", *history)
    assert "opaque==" not in json.dumps(openai_body) and "sig-1" not in json.dumps(openai_body)


@pytest.mark.parametrize(
    ("provider", "model", "reasoning", "field", "value"),
    [
        ("openai", "gpt-5.4-mini", "off", "reasoning_effort", "none"),
        ("openai", "gpt-5-mini", "off", "reasoning_effort", "minimal"),
        ("openai", "o3", "high", "reasoning_effort", "high"),
        ("openrouter", "moonshotai/kimi-k2", "medium", "reasoning", {"effort": "medium"}),
        ("mistral", "mistral-small-latest", "low", "reasoning_effort", "high"),
    ],
)
def test_one_reasoning_control_on_the_openai_wire(
    provider: str, model: str, reasoning: str, field: str, value: object
) -> None:
    body, _ = encode(provider, model, reasoning=reasoning)
    assert body[field] == value


def test_a_kimi_thinking_model_cannot_switch_reasoning_off() -> None:
    body, warnings = encode("kimi", "kimi-k2.6", reasoning="off")
    assert "reasoning_effort" not in body
    assert any("cannot switch it off" in w for w in warnings)
