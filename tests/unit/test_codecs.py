"""The wire codecs as pure functions: openai_wire and anthropic_wire (our conversation ⇄ provider JSON),
and the Kimi/Claude codecs built on them (request rules, answer rules). No HTTP here.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from unit._codecs import ProviderCodec

from colibri_router.conversation import (
    AssistantTurn,
    CompletionRequest,
    Message,
    RedactedThinking,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Usage,
    render_content,
    tool_specs,
    user_prompt,
)
from colibri_router.errors import MalformedResponse
from colibri_router.wires import anthropic as anthropic_wire
from colibri_router.wires.openai import decode as openai_decode
from colibri_router.wires.openai import messages as openai_messages
from colibri_router.wires.rules import REASONING_PLACEHOLDER

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"location": {"type": "string"}, "when": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    "required": ["location"],
    "$defs": {"unused": {"type": "integer"}},
}
WEATHER = ToolSpec(name="get_weather", input_schema=SCHEMA, description="Get weather")


def user(*parts: Any) -> Message:
    return Message(role="user", parts=parts)


def assistant(*parts: Any) -> Message:
    return Message(role="assistant", parts=parts)


def request(*messages: Message, **fields: Any) -> CompletionRequest:
    fields.setdefault("model", "kimi-k2-0905-preview")
    fields.setdefault("max_tokens", 1024)
    return CompletionRequest(messages=messages or user_prompt("hi"), **fields)


def chat_body(message: dict[str, Any], finish_reason: str | None = "stop", **top: Any) -> dict[str, Any]:
    """A non-streamed chat.completion body around one ``message``."""
    return {"model": "kimi-k2", "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}], **top}


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def decoded_calls(*raw_calls: dict[str, Any]) -> list[ToolCall]:
    turn = openai_decode.decode_body(chat_body({"role": "assistant", "content": None, "tool_calls": list(raw_calls)}))
    return list(turn.tool_calls())


# --- openai_wire: encode -------------------------------------------------------------------------------------


def test_openai_encode_tools_passes_the_schema_through_as_parameters() -> None:
    bare = ToolSpec(name="ping", input_schema={"type": "object"})

    encoded = openai_messages.encode_tools([WEATHER, bare])

    assert encoded == [
        {"type": "function", "function": {"name": "get_weather", "description": "Get weather", "parameters": SCHEMA}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}},
    ]


def test_openai_encode_tools_never_shares_a_mutable_schema_with_the_caller() -> None:
    schema = copy.deepcopy(SCHEMA)

    encoded = openai_messages.encode_tools([ToolSpec(name="t", input_schema=schema)])
    encoded[0]["function"]["parameters"]["injected"] = True

    assert schema == SCHEMA


def test_openai_system_prompt_is_a_leading_system_message() -> None:
    assert openai_messages.encode_messages(user_prompt("hi"), "Be brief.") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]


@pytest.mark.parametrize("system", [None, ""])
def test_openai_no_system_message_without_a_system_prompt(system: str | None) -> None:
    assert openai_messages.encode_messages(user_prompt("hi"), system) == [{"role": "user", "content": "hi"}]


def test_openai_assistant_tool_calls_carry_null_content_and_json_arguments() -> None:
    turn = assistant(Thinking("plan"), ToolCall("functions.get_weather:0", "get_weather", {"location": "Zürich"}))

    [message] = openai_messages.encode_messages([turn], None)

    assert message == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "plan",
        "tool_calls": [
            {
                "id": "functions.get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "Zürich"}'},
            }
        ],
    }


def test_openai_empty_assistant_turn_is_dropped() -> None:
    assert openai_messages.encode_messages([user(Text("a")), assistant(Text("")), user(Text("b"))], None) == [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ]


def test_openai_user_turn_sends_every_tool_result_before_its_text() -> None:
    """OpenAI refuses a user message inside the run of tool messages answering an assistant turn
    (PROVIDER-FACTS.md Q-openai-tool-order): the results come first, then the text."""
    turn = user(
        ToolResult("c1", "21 °C"),
        Text("and "),
        Text("also"),
        ToolResult("c2", "   "),
        ToolResult("c3", "boom", is_error=True),
    )

    assert openai_messages.encode_messages([turn], None) == [
        {"role": "tool", "tool_call_id": "c1", "content": "21 °C"},
        {"role": "tool", "tool_call_id": "c2", "content": openai_messages.EMPTY_TOOL_RESULT},
        {"role": "tool", "tool_call_id": "c3", "content": openai_messages.ERROR_RESULT_PREFIX + "boom"},
        {"role": "user", "content": "and also"},
    ]


# --- openai_wire: decode -------------------------------------------------------------------------------------


def test_openai_decode_text_answer() -> None:
    body = chat_body({"role": "assistant", "content": "Hello"}, usage={"prompt_tokens": 3, "completion_tokens": 2})

    turn = openai_decode.decode_body(body)

    assert turn == AssistantTurn(parts=(Text("Hello"),), stop_reason="stop", model="kimi-k2", usage=Usage(3, 2))


def test_openai_decode_keeps_raw_ids_reasoning_and_order() -> None:
    message = {
        "role": "assistant",
        "reasoning_content": "thinking...",
        "content": "Let me look.",
        "tool_calls": [
            call("functions.get_weather:0", "get_weather", '{"location": "Oslo"}'),
            call("call_001", "x", "{}"),
        ],
    }

    turn = openai_decode.decode_body(chat_body(message, "tool_calls"))

    assert turn.parts == (
        Thinking("thinking..."),
        Text("Let me look."),
        ToolCall("functions.get_weather:0", "get_weather", {"location": "Oslo"}),
        ToolCall("call_001", "x", {}),
    )
    assert turn.stop_reason == "tool_calls"  # the raw finish_reason: the Kimi codec maps it


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("   ", {}),
        (None, {}),
        ({"already": "an object"}, {"already": "an object"}),
    ],
    ids=["json", "empty", "blank", "null", "object"],
)
def test_i12_openai_decode_arguments(arguments: Any, expected: dict[str, Any]) -> None:
    [decoded] = decoded_calls(call("c", "t", arguments))

    assert decoded.arguments == expected


@pytest.mark.parametrize(
    "raw",
    ['{"a": ', "not json", "[1, 2]", '"a string"', "[" * 100_000],
    ids=["truncated", "prose", "array", "string", "too-deep"],
)
def test_i12_openai_decode_unusable_arguments_keep_the_raw_text(raw: str) -> None:
    [decoded] = decoded_calls(call("c", "t", raw))

    assert decoded.arguments["_raw"] == raw
    assert isinstance(decoded.arguments["_parse_error"], str)
    assert decoded.arguments["_parse_error"]


def test_openai_decode_usage_falls_back_to_the_choice_and_ignores_junk() -> None:
    in_choice = chat_body({"role": "assistant", "content": "x"})
    in_choice["choices"][0]["usage"] = {"prompt_tokens": 8, "completion_tokens": 1}
    junk = chat_body({"role": "assistant", "content": "x"}, usage={"prompt_tokens": "8", "completion_tokens": None})

    assert openai_decode.decode_body(in_choice).usage == Usage(8, 1)
    assert openai_decode.decode_body(junk).usage == Usage(0, 0)


@pytest.mark.parametrize("model", [None, "", 42])
def test_openai_decode_missing_model_is_none(model: Any) -> None:
    body = chat_body({"role": "assistant", "content": "x"})
    body["model"] = model

    assert openai_decode.decode_body(body).model is None


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"choices": []},
        {"choices": "nope"},
        {"choices": [{"finish_reason": "stop"}]},
        chat_body({"role": "assistant", "content": 42}),
        chat_body({"role": "assistant", "content": None, "tool_calls": {"not": "a list"}}),
        chat_body({"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {}}]}),
    ],
    ids=["empty", "no-choices", "choices-not-list", "no-message", "content-number", "calls-not-list", "call-no-name"],
)
def test_openai_decode_malformed_bodies_raise_malformed_response(body: dict[str, Any]) -> None:
    with pytest.raises(MalformedResponse):
        openai_decode.decode_body(body)


# --- anthropic_wire --------------------------------------------------------------------------------------------


def test_anthropic_encode_tools_keep_input_schema() -> None:
    assert anthropic_wire.encode_tools([WEATHER, ToolSpec("ping", {"type": "object"})]) == [
        {"name": "get_weather", "description": "Get weather", "input_schema": SCHEMA},
        {"name": "ping", "input_schema": {"type": "object"}},
    ]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (ToolChoice("auto"), {"type": "auto"}),
        (ToolChoice("none"), {"type": "none"}),
        (ToolChoice("required"), {"type": "any"}),
        (ToolChoice("tool", "get_weather"), {"type": "tool", "name": "get_weather"}),
    ],
)
def test_anthropic_encode_tool_choice(choice: ToolChoice, expected: dict[str, Any]) -> None:
    assert anthropic_wire.encode_tool_choice(choice) == expected


def test_anthropic_encode_messages_blocks() -> None:
    messages = [
        user(Text("weather?")),
        assistant(
            Thinking("unsigned, from another model"),
            Thinking("signed", signature="sig"),
            Text(""),
            ToolCall("toolu_1", "get_weather", {"location": "Oslo"}),
        ),
        user(ToolResult("toolu_1", "cold", is_error=True), Text("thanks")),
        assistant(Text("")),
    ]

    assert anthropic_wire.encode_messages(messages) == [
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "signed", "signature": "sig"},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "Oslo"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "cold", "is_error": True},
                {"type": "text", "text": "thanks"},
            ],
        },
    ]


def test_anthropic_decode_body() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "Oslo"}},
            {"type": "tool_use", "id": "toolu_2", "name": "ping", "input": None},
            {"type": "tool_use", "id": "toolu_3", "name": "ping", "input": [1, 2]},
            {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}},
        ],
        "stop_reason": "pause_turn",
        "usage": {"input_tokens": 10, "output_tokens": 4, "cache_read_input_tokens": 99},
    }

    assert anthropic_wire.decode_body(body) == AssistantTurn(
        parts=(
            Thinking("hmm", "sig"),
            RedactedThinking("opaque"),
            Text("Checking."),
            ToolCall("toolu_1", "get_weather", {"location": "Oslo"}),
            ToolCall("toolu_2", "ping", {}),  # null input means no arguments
            ToolCall(
                "toolu_3", "ping", {"_parse_error": "arguments are a JSON array, not an object", "_raw": "[1, 2]"}
            ),
        ),
        stop_reason="pause_turn",
        model="claude-sonnet-4-5",
        # input_tokens counts only uncached input: the total adds the cache reads.
        usage=Usage(109, 4, cached_tokens=99),
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"content": "text"},
        {"content": ["not a block"]},
        {"content": [{"type": "tool_use", "name": "x", "input": {}}]},
        {"content": [{"type": "tool_use", "id": "toolu_1", "input": {}}]},
    ],
    ids=["empty", "content-string", "block-not-object", "tool-use-no-id", "tool-use-no-name"],
)
def test_anthropic_decode_malformed_bodies_raise_malformed_response(body: dict[str, Any]) -> None:
    with pytest.raises(MalformedResponse):
        anthropic_wire.decode_body(body)


# --- the Kimi codec --------------------------------------------------------------------------------------------


def test_kimi_endpoint_is_chat_completions_with_a_bearer_key() -> None:
    assert ProviderCodec("kimi").endpoint("https://api.moonshot.ai/v1", "k-123") == (
        "https://api.moonshot.ai/v1/chat/completions",
        {"authorization": "Bearer k-123"},
    )


def test_kimi_encode_body_for_a_plain_prompt() -> None:
    encoded = ProviderCodec("kimi").encode(request(system="sys", max_tokens=99))

    assert encoded.body == {
        "model": "kimi-k2-0905-preview",
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}],
        "max_tokens": 99,
        "stream": True,
    }
    assert encoded.warnings == ()


def test_i10_kimi_encode_sends_no_tools_key_for_no_tools() -> None:
    body = ProviderCodec("kimi").encode(request(tools=(), tool_choice=ToolChoice("required"))).body

    assert "tools" not in body
    assert "tool_choice" not in body


def test_i19_kimi_encode_tools_with_auto_choice() -> None:
    body = ProviderCodec("kimi").encode(request(tools=(WEATHER,), temperature=0.3)).body

    assert body["tools"] == openai_messages.encode_tools([WEATHER])
    assert body["tool_choice"] == "auto"
    assert body["temperature"] == 0.3


@pytest.mark.parametrize(
    ("choice", "nudge_mentions"),
    [(ToolChoice("required"), "one of the available tools"), (ToolChoice("tool", "get_weather"), "`get_weather`")],
    ids=["required", "named"],
)
def test_kimi_forced_tool_choice_becomes_auto_plus_a_user_nudge(choice: ToolChoice, nudge_mentions: str) -> None:
    encoded = ProviderCodec("kimi").encode(request(tools=(WEATHER,), tool_choice=choice))

    assert encoded.body["tool_choice"] == "auto"
    last = encoded.body["messages"][-1]
    assert last["role"] == "user"
    assert nudge_mentions in last["content"]
    assert len(encoded.warnings) == 1


def test_kimi_tool_choice_none_is_kept() -> None:
    encoded = ProviderCodec("kimi").encode(request(tools=(WEATHER,), tool_choice=ToolChoice("none")))

    assert encoded.body["tool_choice"] == "none"
    assert encoded.warnings == ()


def conversation_with_calls(first_id: str, second_id: str) -> tuple[Message, ...]:
    return (
        user(Text("weather in Oslo and Rome?")),
        assistant(ToolCall(first_id, "get_weather", {"location": "Oslo"})),
        user(ToolResult(first_id, "cold")),
        assistant(ToolCall(second_id, "get_weather", {"location": "Rome"})),
        user(ToolResult(second_id, "warm")),
    )


def test_kimi_encode_rewrites_history_ids_to_k2_ids() -> None:
    messages = conversation_with_calls("toolu_01A", "call_x")

    sent = ProviderCodec("kimi").encode(request(*messages)).body["messages"]

    call_ids = [m["tool_calls"][0]["id"] for m in sent if m["role"] == "assistant"]
    result_ids = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert call_ids == result_ids == ["functions.get_weather:0", "functions.get_weather:1"]


def test_kimi_thinking_model_gets_placeholder_reasoning_on_tool_call_turns() -> None:
    messages = conversation_with_calls("a", "b")

    encoded = ProviderCodec("kimi").encode(request(*messages, model="kimi-k2-thinking"))

    assistants = [m for m in encoded.body["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in assistants] == [REASONING_PLACEHOLDER] * 2
    assert len(encoded.warnings) == 1


def test_kimi_non_thinking_model_gets_no_reasoning() -> None:
    body = ProviderCodec("kimi").encode(request(*conversation_with_calls("a", "b"))).body

    assert all("reasoning_content" not in m for m in body["messages"])


def test_i20_kimi_encode_leaves_the_request_unchanged() -> None:
    req = request(*conversation_with_calls("toolu_01A", "call_x"), tools=(WEATHER,), tool_choice=ToolChoice("required"))
    before = copy.deepcopy(req)

    ProviderCodec("kimi").encode(req)

    assert req == before


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("something_new", "something_new"),
        (None, None),
    ],
)
def test_i13_kimi_decode_maps_finish_reason(finish_reason: str | None, stop_reason: str | None) -> None:
    turn = ProviderCodec("kimi").decode(chat_body({"role": "assistant", "content": "x"}, finish_reason), request())

    assert turn.stop_reason == stop_reason


@pytest.mark.parametrize("finish_reason", ["stop", "length", None])
def test_i13_kimi_decode_tool_calls_mean_tool_use(finish_reason: str | None) -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [call("call_001", "get_weather", "{}")]}

    turn = ProviderCodec("kimi").decode(chat_body(message, finish_reason), request(tools=(WEATHER,)))

    assert turn.stop_reason == "tool_use"
    assert turn.tool_calls() == (ToolCall("call_001", "get_weather", {}),)  # the upstream's ID, untouched
    assert turn.warnings == ()


def test_kimi_decode_warns_about_undeclared_tools() -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [call("c", "rm_rf", "{}")]}

    turn = ProviderCodec("kimi").decode(chat_body(message, "tool_calls"), request(tools=(WEATHER,)))

    assert len(turn.warnings) == 1
    assert "rm_rf" in turn.warnings[0]


def test_kimi_decode_turns_k2_marker_text_into_tool_calls() -> None:
    content = (
        "I'll check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"location": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>'
    )

    turn = ProviderCodec("kimi").decode(chat_body({"role": "assistant", "content": content}), request(tools=(WEATHER,)))

    assert turn.parts == (Text("I'll check."), ToolCall("functions.get_weather:0", "get_weather", {"location": "Oslo"}))
    assert turn.stop_reason == "tool_use"


# --- the Claude codec ------------------------------------------------------------------------------------------


def test_claude_endpoint_is_messages_with_x_api_key_and_version() -> None:
    assert ProviderCodec("claude").endpoint("https://api.anthropic.com", "k-123") == (
        "https://api.anthropic.com/v1/messages",
        {"x-api-key": "k-123", "anthropic-version": "2023-06-01"},
    )


def test_claude_encode_body() -> None:
    req = request(
        model="claude-sonnet-4-5",
        system="sys",
        tools=(WEATHER,),
        tool_choice=ToolChoice("required"),
        temperature=0.5,
    )

    assert ProviderCodec("claude").encode(req).body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "system": "sys",
        "temperature": 0.5,
        "tools": anthropic_wire.encode_tools([WEATHER]),
        "tool_choice": {"type": "any"},
        "stream": True,
    }


def test_i10_claude_encode_sends_no_tools_and_no_choice_without_tools() -> None:
    body = ProviderCodec("claude").encode(request(model="claude-sonnet-4-5", tool_choice=ToolChoice("required"))).body

    assert "tools" not in body
    assert "tool_choice" not in body
    assert "system" not in body


def test_claude_encode_makes_k2_ids_claude_safe_for_calls_and_results_alike() -> None:
    messages = conversation_with_calls("functions.get_weather:0", "toolu_01B")

    sent = ProviderCodec("claude").encode(request(*messages, model="claude-sonnet-4-5")).body["messages"]

    blocks = [block for message in sent for block in message["content"]]
    call_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    result_ids = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    assert call_ids == result_ids
    assert call_ids[1] == "toolu_01B"
    assert all(ch.isalnum() or ch in "_-" for ch in call_ids[0])


@pytest.mark.parametrize("stop_reason", ["end_turn", "tool_use", "max_tokens", "pause_turn", "refusal", None])
def test_i13_claude_decode_passes_stop_reason_through(stop_reason: str | None) -> None:
    body = {"content": [{"type": "text", "text": "x"}], "stop_reason": stop_reason}

    assert ProviderCodec("claude").decode(body, request()).stop_reason == stop_reason


# --- the contract's content (I11) -------------------------------------------------------------------------------


def turn_of(*parts: Any) -> AssistantTurn:
    return AssistantTurn(parts=parts, stop_reason=None, model=None)


def test_i11_content_of_a_text_turn_is_the_text() -> None:
    assert render_content(turn_of(Thinking("hidden"), Text("Hello, "), Text("world"))) == "Hello, world"


def test_i11_content_of_a_tool_turn_is_compact_json_with_a_leading_text_block() -> None:
    content = render_content(turn_of(Thinking("hidden"), Text("Checking."), ToolCall("call_001", "t", {"q": "ü"})))

    assert (
        content
        == '[{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_001","name":"t","input":{"q":"ü"}}]'
    )
    assert json.loads(content)[1]["input"] == {"q": "ü"}


def test_i11_content_of_a_tool_turn_without_text_has_only_tool_use_blocks() -> None:
    content = render_content(turn_of(ToolCall("a", "t", {}), ToolCall("b", "u", {"x": 1})))

    assert json.loads(content) == [
        {"type": "tool_use", "id": "a", "name": "t", "input": {}},
        {"type": "tool_use", "id": "b", "name": "u", "input": {"x": 1}},
    ]


def test_i20_tool_specs_reads_anthropic_tools_without_changing_them() -> None:
    tools = [{"name": "get_weather", "description": "d", "input_schema": copy.deepcopy(SCHEMA)}]
    before = copy.deepcopy(tools)

    specs = tool_specs(tools)

    assert specs == (ToolSpec(name="get_weather", input_schema=SCHEMA, description="d"),)
    assert tools == before
