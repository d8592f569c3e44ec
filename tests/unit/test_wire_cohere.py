"""The Cohere v2 chat wire as pure functions: request JSON as Cohere documents it, answers and named SSE
events from hand-written transcripts of real wire shapes, flat error bodies (PROVIDER-FACTS.md §4,
quirk fixtures Q-cohere-24 and 25).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colibri_router.conversation import (
    CompletionRequest,
    Message,
    ProviderState,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Usage,
)
from colibri_router.errors import ApiError, InvalidRequestError, MalformedResponse
from colibri_router.providers import ProviderSpec, profile_for
from colibri_router.toolcalls.assembly.base import StreamCutError, StreamErrorEvent
from colibri_router.wires.base import Dialect
from colibri_router.wires.cohere import EMPTY_TOOL_RESULT, ERROR_RESULT_PREFIX, CohereCodec, make_codec
from colibri_router.wires.cohere.assembly import CohereStreamAssembler

SPEC = ProviderSpec(
    name="cohere",
    wire="cohere",
    base_url="https://api.cohere.com",
    base_url_env="COHERE_BASE_URL",
    key_envs=("CO_API_KEY", "COHERE_API_KEY"),
)
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolSpec(name="get_weather", input_schema=SCHEMA, description="Weather for a city")
TIME = ToolSpec(name="get_time", input_schema={"type": "object"})
PLAN = ProviderState("cohere", {"kind": "tool_plan"})
THOUGHT = ProviderState("cohere", {"kind": "thinking"})


def codec(model: str = "command-a-03-2025") -> CohereCodec:
    return make_codec(Dialect(provider=SPEC, profile=profile_for(model)))


def user(*parts: Any) -> Message:
    return Message(role="user", parts=parts)


def assistant(*parts: Any) -> Message:
    return Message(role="assistant", parts=parts)


def request(*messages: Message, **fields: Any) -> CompletionRequest:
    fields.setdefault("model", "command-a-03-2025")
    fields.setdefault("max_tokens", 800)
    return CompletionRequest(messages=messages or (user(Text("hi")),), **fields)


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def response(message: dict[str, Any], finish: str = "COMPLETE", **top: Any) -> dict[str, Any]:
    return {"id": "resp-1", "finish_reason": finish, "message": {"role": "assistant", **message}, **top}


def decode(body: dict[str, Any]) -> Any:
    return codec().decode(body, request())


def sse(kind: str, **payload: Any) -> tuple[str, str]:
    return kind, json.dumps({"type": kind, **payload})


def assemble(*events: tuple[str, str]) -> dict[str, Any]:
    assembler = CohereStreamAssembler()
    for name, data in events:
        assembler.feed(name, data)
    return assembler.result()


# --- endpoint ------------------------------------------------------------------------------------------------


def test_endpoint_posts_to_v2_chat_with_a_bearer_key() -> None:
    spec = ProviderSpec(name="cohere", wire="cohere", base_url="x", base_url_env="X", headers={"x-client-name": "c"})
    url, headers = make_codec(Dialect(spec, profile_for("command-a-03-2025"))).endpoint(
        "https://api.cohere.com", "co-key", "command-a-03-2025"
    )

    assert url == "https://api.cohere.com/v2/chat"
    assert headers == {"x-client-name": "c", "authorization": "Bearer co-key"}


# --- encode --------------------------------------------------------------------------------------------------


def test_encode_builds_the_documented_request_from_a_tool_loop() -> None:
    history = (
        user(Text("Weather in Paris?")),
        assistant(
            Thinking("I should look it up", state=THOUGHT),
            Thinking("I will call get_weather.", state=PLAN),
            ToolCall("call_1", "get_weather", {"city": "Paris"}),
            ToolCall("call_2", "get_time", {}),
        ),
        user(ToolResult("call_1", "sunny"), ToolResult("call_2", "", is_error=True), Text("Thanks!")),
    )

    encoded = codec().encode(request(*history, system="Be brief.", tools=(WEATHER, TIME), temperature=0.2))

    assert encoded.body == {
        "model": "command-a-03-2025",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "I should look it up"}],
                "tool_plan": "I will call get_weather.",
                "tool_calls": [
                    call("call_1", "get_weather", '{"city": "Paris"}'),
                    call("call_2", "get_time", "{}"),
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_2", "content": ERROR_RESULT_PREFIX + EMPTY_TOOL_RESULT},
            {"role": "user", "content": "Thanks!"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "get_weather", "description": "Weather for a city", "parameters": SCHEMA},
            },
            {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
        ],
        "max_tokens": 800,
        "temperature": 0.2,
        "stream": True,
    }
    assert encoded.warnings == ()


def test_another_providers_reasoning_is_not_replayed_as_cohere_thinking() -> None:
    history = (
        user(Text("q")),
        assistant(Thinking("claude thought", signature="sig"), Thinking("kimi reasoning"), Text("answer")),
        user(Text("next")),
    )

    messages = codec().encode(request(*history)).body["messages"]

    assert messages[1] == {"role": "assistant", "content": [{"type": "text", "text": "answer"}]}


def test_an_assistant_turn_with_nothing_cohere_can_read_is_left_out() -> None:
    history = (user(Text("q")), assistant(Text(""), Thinking("x", state=THOUGHT)), user(Text("again")))

    messages = codec().encode(request(*history)).body["messages"]

    assert [message["role"] for message in messages] == ["user", "user"]


def test_tool_results_come_right_after_the_calls_even_when_text_preceded_them() -> None:
    history = (
        user(Text("go")),
        assistant(ToolCall("c1", "get_time", {})),
        user(Text("here you go"), ToolResult("c1", "now")),
    )

    messages = codec().encode(request(*history)).body["messages"]

    assert [message["role"] for message in messages] == ["user", "assistant", "tool", "user"]


@pytest.mark.parametrize(
    ("choice", "tools", "field"),
    [
        (None, ["get_weather", "get_time"], None),
        (ToolChoice("auto"), ["get_weather", "get_time"], None),
        (ToolChoice("none"), ["get_weather", "get_time"], "NONE"),
        (ToolChoice("required"), ["get_weather", "get_time"], "REQUIRED"),
        (ToolChoice("tool", "get_time"), ["get_time"], "REQUIRED"),
    ],
)
def test_tool_choice_is_required_none_or_left_out(
    choice: ToolChoice | None, tools: list[str], field: str | None
) -> None:
    # Q-cohere-toolchoice
    body = codec().encode(request(tools=(WEATHER, TIME), tool_choice=choice)).body

    assert [tool["function"]["name"] for tool in body["tools"]] == tools
    assert body.get("tool_choice") == field


def test_a_named_tool_that_is_not_offered_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequestError, match="'get_stock'"):
        codec().encode(request(tools=(WEATHER,), tool_choice=ToolChoice("tool", "get_stock")))


def test_without_tools_neither_tools_nor_tool_choice_is_sent() -> None:
    body = codec().encode(request(tool_choice=ToolChoice("required"))).body

    assert "tools" not in body
    assert "tool_choice" not in body


@pytest.mark.parametrize(
    ("model", "reasoning", "thinking", "warned"),
    [
        ("command-a-reasoning-08-2025", None, None, False),
        ("command-a-reasoning-08-2025", "off", {"type": "disabled"}, False),
        ("command-a-reasoning-08-2025", "low", {"type": "enabled", "token_budget": 1024}, False),
        ("command-a-reasoning-08-2025", "medium", {"type": "enabled", "token_budget": 4096}, False),
        ("command-a-plus-05-2026", "high", {"type": "enabled", "token_budget": 16384}, False),
        ("command-a-03-2025", "off", None, False),
        ("command-r7b-12-2024", "high", None, True),
    ],
)
def test_reasoning_maps_to_the_thinking_field(model: str, reasoning: Any, thinking: Any, warned: bool) -> None:
    encoded = codec(model).encode(request(model=model, reasoning=reasoning))

    assert encoded.body.get("thinking") == thinking
    assert bool(encoded.warnings) is warned


# --- decode --------------------------------------------------------------------------------------------------


def test_decode_reads_thinking_plan_text_and_calls() -> None:
    body = response(
        {
            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Let me check."}],
            "tool_plan": "I will call get_weather.",
            "tool_calls": [call("get_weather_dqgshstja6p9", "get_weather", '{"city":"Paris"}')],
        },
        finish="TOOL_CALL",
        usage={
            "billed_units": {"input_tokens": 10.0, "output_tokens": 5.0},
            "tokens": {"input_tokens": 120.0, "output_tokens": 30.0},
            "cached_tokens": 64.0,
        },
    )

    turn = decode(body)

    assert turn.parts == (
        Thinking("hmm", state=THOUGHT),
        Text("Let me check."),
        Thinking("I will call get_weather.", state=PLAN),
        ToolCall("get_weather_dqgshstja6p9", "get_weather", {"city": "Paris"}),
    )
    assert turn.stop_reason == "tool_use"
    assert turn.thinking() == "hmmI will call get_weather."
    assert turn.usage == Usage(prompt_tokens=120, completion_tokens=30, cached_tokens=64)


def test_a_decoded_plan_is_replayed_as_the_tool_plan() -> None:
    body = response(
        {"tool_plan": "Look it up.", "tool_calls": [call("t1", "get_time", "{}")]},
        finish="TOOL_CALL",
    )
    turn = decode(body)

    messages = (
        codec().encode(request(user(Text("q")), assistant(*turn.parts), user(ToolResult("t1", "now")))).body["messages"]
    )

    assert messages[1] == {
        "role": "assistant",
        "tool_plan": "Look it up.",
        "tool_calls": [call("t1", "get_time", "{}")],
    }


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("COMPLETE", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("STOP_SEQUENCE", "stop_sequence"),
        ("TOOL_CALL", "tool_use"),
    ],
)
def test_finish_reasons_map_to_stop_reasons(finish: str, stop: str) -> None:
    assert decode(response({"content": [{"type": "text", "text": "x"}]}, finish=finish)).stop_reason == stop


def test_finish_error_is_a_cohere_api_error() -> None:
    with pytest.raises(ApiError) as caught:
        decode(response({"content": []}, finish="ERROR"))

    assert (caught.value.code, caught.value.status, caught.value.retryable) == ("COHERE_API_ERROR", 200, False)


def test_finish_timeout_is_a_retryable_cohere_api_error() -> None:
    with pytest.raises(ApiError) as caught:
        decode(response({"content": [{"type": "text", "text": "partial"}]}, finish="TIMEOUT"))

    assert (caught.value.code, caught.value.error_type, caught.value.retryable) == ("COHERE_API_ERROR", "TIMEOUT", True)
    assert (caught.value.kind, caught.value.retryable_later) == ("TIMEOUT", True)


def test_a_stream_ending_with_finish_timeout_is_a_timeout() -> None:
    body = assemble(
        sse("message-start", id="m"),
        sse("content-start", index=0, delta={"message": {"content": {"type": "text", "text": ""}}}),
        sse("content-delta", index=0, delta={"message": {"content": {"text": "partial"}}}),
        sse("message-end", delta={"finish_reason": "TIMEOUT", "usage": {}}),
    )

    with pytest.raises(ApiError) as caught:
        decode(body)

    assert (caught.value.kind, caught.value.retryable, caught.value.retryable_later) == ("TIMEOUT", True, True)


def test_unparseable_arguments_reach_the_host_intact() -> None:
    turn = decode(response({"tool_calls": [call("t1", "get_time", '{"tz": ')]}, finish="TOOL_CALL"))

    assert turn.tool_calls()[0].arguments["_raw"] == '{"tz": '


def test_a_body_without_a_message_is_malformed() -> None:
    with pytest.raises(MalformedResponse):
        decode({"finish_reason": "COMPLETE"})


# --- stream assembly -----------------------------------------------------------------------------------------

TOOL_STREAM = (
    sse("message-start", id="msg-1", delta={"message": {"role": "assistant", "content": [], "tool_plan": ""}}),
    sse("tool-plan-delta", delta={"message": {"tool_plan": "I will look up "}}),
    sse("tool-plan-delta", delta={"message": {"tool_plan": "the weather."}}),
    sse(
        "tool-call-start",
        index=0,
        delta={
            "message": {
                "tool_calls": {
                    "id": "get_weather_dqgshstja6p9",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            }
        },
    ),
    sse("tool-call-delta", index=0, delta={"message": {"tool_calls": {"function": {"arguments": '{"city":'}}}}),
    sse("tool-call-delta", index=0, delta={"message": {"tool_calls": {"function": {"arguments": '"Paris"}'}}}}),
    sse("tool-call-end", index=0),
    sse(
        "message-end",
        delta={
            "finish_reason": "TOOL_CALL",
            "usage": {
                "billed_units": {"input_tokens": 20.0, "output_tokens": 12.0},
                "tokens": {"input_tokens": 900.0, "output_tokens": 40.0},
            },
        },
    ),
)


def test_a_tool_call_stream_rebuilds_the_response() -> None:
    # Q-cohere-events: named events, tool_calls as ONE object, argument fragments, usage at message-end.
    body = assemble(*TOOL_STREAM)

    assert body == response(
        {
            "content": [],
            "tool_plan": "I will look up the weather.",
            "tool_calls": [call("get_weather_dqgshstja6p9", "get_weather", '{"city":"Paris"}')],
        },
        finish="TOOL_CALL",
        id="msg-1",
        usage={
            "billed_units": {"input_tokens": 20.0, "output_tokens": 12.0},
            "tokens": {"input_tokens": 900.0, "output_tokens": 40.0},
        },
    )
    turn = decode(body)
    assert turn.tool_calls() == (ToolCall("get_weather_dqgshstja6p9", "get_weather", {"city": "Paris"}),)
    assert turn.usage == Usage(prompt_tokens=900, completion_tokens=40)


def test_thinking_and_text_blocks_keep_their_order_and_kind() -> None:
    body = assemble(
        sse("message-start", id="m"),
        sse("content-start", index=0, delta={"message": {"content": {"type": "thinking", "thinking": ""}}}),
        sse("content-delta", index=0, delta={"message": {"content": {"thinking": "Alice has "}}}),
        sse("content-delta", index=0, delta={"message": {"content": {"thinking": "2 sisters."}}}),
        sse("content-end", index=0),
        sse("content-start", index=1, delta={"message": {"content": {"type": "text", "text": ""}}}),
        sse("content-delta", index=1, delta={"message": {"content": {"text": "Three."}}}),
        sse("content-end", index=1),
        sse(
            "message-end",
            delta={"finish_reason": "COMPLETE", "usage": {"tokens": {"input_tokens": 5, "output_tokens": 9}}},
        ),
    )

    turn = decode(body)

    assert turn.parts == (Thinking("Alice has 2 sisters.", state=THOUGHT), Text("Three."))
    assert turn.stop_reason == "end_turn"


def test_events_without_names_are_read_by_their_type_and_a_done_sentinel_is_harmless() -> None:
    unnamed = [("message", data) for _, data in TOOL_STREAM]

    assert assemble(*unnamed, ("message", "[DONE]")) == assemble(*TOOL_STREAM)


def test_a_stream_without_message_end_is_a_cut() -> None:
    assembler = CohereStreamAssembler()
    for name, data in TOOL_STREAM[:-1]:
        assembler.feed(name, data)

    with pytest.raises(StreamCutError, match="no message-end"):
        assembler.result()


def test_message_end_with_an_error_is_an_error_event() -> None:
    assembler = CohereStreamAssembler()
    assembler.feed(*sse("message-start", id="m"))

    with pytest.raises(StreamErrorEvent) as caught:
        assembler.feed(*sse("message-end", delta={"finish_reason": "ERROR", "error": "internal failure"}))

    assert (caught.value.error_type, caught.value.message) == ("ERROR", "internal failure")


def test_progress_labels() -> None:
    assembler = CohereStreamAssembler()

    labels = [assembler.feed(*event) for event in TOOL_STREAM]

    assert labels == [None, "thinking", None, "tool_call get_weather", None, None, None, None]
    assert assembler.output_chars == len("I will look up the weather.") + len('{"city":"Paris"}')


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(min_size=1, max_size=40),
    arguments=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4),
    text_cuts=st.lists(st.integers(0, 40), max_size=5),
    argument_cuts=st.lists(st.integers(0, 80), max_size=5),
)
def test_any_fragmenting_of_text_and_arguments_gives_the_same_answer(
    text: str, arguments: dict[str, Any], text_cuts: list[int], argument_cuts: list[int]
) -> None:
    encoded_arguments = json.dumps(arguments)

    def pieces(value: str, cuts: list[int]) -> list[str]:
        bounds = sorted({0, len(value), *(cut % (len(value) + 1) for cut in cuts)})
        return [value[a:b] for a, b in itertools.pairwise(bounds)]

    events = [
        sse("message-start", id="m"),
        sse("content-start", index=0, delta={"message": {"content": {"type": "text", "text": ""}}}),
        *(sse("content-delta", index=0, delta={"message": {"content": {"text": p}}}) for p in pieces(text, text_cuts)),
        sse(
            "tool-call-start",
            index=0,
            delta={
                "message": {"tool_calls": {"id": "t1", "type": "function", "function": {"name": "f", "arguments": ""}}}
            },
        ),
        *(
            sse("tool-call-delta", index=0, delta={"message": {"tool_calls": {"function": {"arguments": p}}}})
            for p in pieces(encoded_arguments, argument_cuts)
        ),
        sse("message-end", delta={"finish_reason": "TOOL_CALL"}),
    ]

    turn = decode(assemble(*events))

    assert turn.parts == (Text(text), ToolCall("t1", "f", arguments))


# --- mixed histories -----------------------------------------------------------------------------------------


@st.composite
def _tool_loop(draw: st.DrawFn) -> tuple[Message, ...]:
    """A tool loop whose assistant turns may come from any provider, every call answered."""
    messages: list[Message] = [user(Text("start"))]
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        parts: list[Any] = []
        if draw(st.booleans()):
            state = draw(st.sampled_from([None, PLAN, THOUGHT, ProviderState("gemini", {"thought_signature": "s"})]))
            parts.append(Thinking(draw(st.text(max_size=8)), state=state))
        if draw(st.booleans()):
            parts.append(Text(draw(st.text(max_size=8))))
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            counter += 1
            calls.append(ToolCall(f"call_{counter}", "get_time", {"n": counter}))
        messages.append(assistant(*parts, *calls))
        tail = [Text(draw(st.text(min_size=1, max_size=8)))] if draw(st.booleans()) or not calls else []
        messages.append(
            user(*draw(st.permutations([ToolResult(c.id, draw(st.text(max_size=8))) for c in calls])), *tail)
        )
    return tuple(messages)


@settings(max_examples=150, deadline=None)
@given(history=_tool_loop())
def test_mixed_histories_encode_to_a_valid_cohere_request(history: tuple[Message, ...]) -> None:
    messages = codec().encode(request(*history, tools=(TIME,))).body["messages"]

    open_calls: set[str] = set()
    for message in messages:
        assert message["role"] in {"system", "user", "assistant", "tool"}
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, (
                "a tool message answers a call of the assistant turn before it"
            )
            assert message["content"], "tool content is never empty"
            open_calls.discard(message["tool_call_id"])
            continue
        assert not open_calls, "every call is answered before the conversation goes on"
        if message["role"] == "assistant":
            assert message.get("content") or message.get("tool_calls")
            for item in message.get("content", []):
                assert item["type"] in {"text", "thinking"} and item[item["type"]]
            open_calls = {c["id"] for c in message.get("tool_calls", [])}
            assert all(isinstance(c["function"]["arguments"], str) for c in message.get("tool_calls", []))
        else:
            assert message["content"]


# --- read_error ----------------------------------------------------------------------------------------------


def test_a_flat_error_body_gives_its_message() -> None:
    error = codec().read_error(400, {}, b'{"id":"e1","message":"invalid request: messages must not be empty"}')

    assert (error.message, error.retryable) == ("invalid request: messages must not be empty", None)


def test_the_trial_keys_monthly_cap_is_not_retried_but_its_per_minute_limit_is() -> None:
    monthly = b'{"message":"You are using a Trial key, which is limited to 1000 API calls / month. Upgrade..."}'
    per_minute = b'{"message":"You are using a Trial key, which is limited to 20 API calls / minute."}'

    assert codec().read_error(429, {}, monthly).retryable is False
    assert codec().read_error(429, {"retry-after": "7"}, per_minute).retryable is None
    assert codec().read_error(429, {"retry-after": "7"}, per_minute).retry_after_s == 7.0
