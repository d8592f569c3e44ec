"""Kimi's request and response rules (issue: multi-turn tool calling), as pure codec tests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_upstream import validate_kimi_request
from unit._codecs import ProviderCodec

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
from colibri_router.errors import InvalidRequestError
from colibri_router.wires.openai.messages import EMPTY_TOOL_RESULT, ERROR_RESULT_PREFIX
from colibri_router.wires.rules import REASONING_PLACEHOLDER

TOOLS = (ToolSpec("read_file", {"type": "object"}), ToolSpec("list_dir", {"type": "object"}))
HEADERS = {"authorization": "Bearer k"}


def request(*messages: Message, model: str = "kimi-k2-0905-preview", **kwargs: Any) -> CompletionRequest:
    fields: dict[str, Any] = {"tools": TOOLS, "max_tokens": 64, **kwargs}
    return CompletionRequest(model=model, messages=messages, **fields)


def user(*parts: Any) -> Message:
    return Message("user", tuple(Text(p) if isinstance(p, str) else p for p in parts))


def assistant(*parts: Any) -> Message:
    return Message("assistant", tuple(Text(p) if isinstance(p, str) else p for p in parts))


def encode(req: CompletionRequest, codec: ProviderCodec | None = None) -> tuple[dict[str, Any], tuple[str, ...]]:
    encoded = (codec or ProviderCodec("kimi")).encode(req)
    return encoded.body, encoded.warnings


LOOP = (
    user("go"),
    assistant(ToolCall("toolu_A", "read_file", {"p": 1}), ToolCall("x:9", "list_dir", {})),
    user(ToolResult("x:9", "dir"), ToolResult("toolu_A", "file")),
    assistant("thinking aloud", ToolCall("call 3", "read_file", {})),
    user(ToolResult("call 3", "")),
)


# -- request rules ---------------------------------------------------------------------------------


def test_tool_choice_defaults_to_auto_when_tools_are_present() -> None:
    body, warnings = encode(request(user("hi")))
    assert body["tool_choice"] == "auto"
    assert warnings == ()


def test_no_tools_means_no_tools_key_and_no_tool_choice() -> None:
    body, _ = encode(request(user("hi"), tools=()))
    assert "tools" not in body
    assert "tool_choice" not in body


def test_tool_choice_none_is_sent_as_is() -> None:
    body, _ = encode(request(user("hi"), tool_choice=ToolChoice("none")))
    assert body["tool_choice"] == "none"


@pytest.mark.parametrize(
    ("choice", "nudge_mentions"),
    [(ToolChoice("required"), "one of the available tools"), (ToolChoice("tool", "read_file"), "`read_file`")],
)
def test_forced_tool_choice_becomes_auto_plus_a_user_nudge_and_a_warning(
    choice: ToolChoice, nudge_mentions: str
) -> None:
    body, warnings = encode(request(user("hi"), tool_choice=choice))
    assert body["tool_choice"] == "auto"
    assert body["messages"][-1]["role"] == "user"
    assert nudge_mentions in body["messages"][-1]["content"]
    assert len(warnings) == 1
    assert "tool_choice" in warnings[0]
    assert validate_kimi_request(body, HEADERS) == []


def test_history_ids_are_renumbered_to_k2_form_across_the_conversation() -> None:
    body, _ = encode(request(*LOOP))
    calls = [c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert calls == ["functions.read_file:0", "functions.list_dir:1", "functions.read_file:2"]
    assert results == ["functions.list_dir:1", "functions.read_file:0", "functions.read_file:2"]
    assert validate_kimi_request(body, HEADERS) == []


def test_repair_mode_keeps_valid_k2_ids_and_repairs_the_rest() -> None:
    history = (
        user("go"),
        assistant(ToolCall("functions.read_file:5", "read_file", {}), ToolCall("toolu_B", "list_dir", {})),
        user(ToolResult("functions.read_file:5", "a"), ToolResult("toolu_B", "b")),
    )
    body, _ = encode(request(*history), ProviderCodec("kimi", id_mode="repair"))
    calls = [c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
    assert calls == ["functions.read_file:5", "functions.list_dir:6"]


def test_empty_tool_result_gets_a_placeholder_and_errors_are_marked() -> None:
    history = (*LOOP[:2], user(ToolResult("x:9", "", is_error=True), ToolResult("toolu_A", "  ")))
    body, _ = encode(request(*history))
    contents = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert contents == [ERROR_RESULT_PREFIX + EMPTY_TOOL_RESULT, EMPTY_TOOL_RESULT]


def test_more_than_128_tools_is_a_clear_error_before_sending() -> None:
    many = tuple(ToolSpec(f"t{i}", {"type": "object"}) for i in range(129))
    with pytest.raises(InvalidRequestError, match="at most 128 tools"):
        encode(request(user("hi"), tools=many))
    body, _ = encode(request(user("hi"), tools=many[:128]))
    assert len(body["tools"]) == 128


def test_result_without_a_call_is_rejected_with_a_clear_error() -> None:
    with pytest.raises(InvalidRequestError, match="ghost"):
        encode(request(user("go"), assistant("ok"), user(ToolResult("ghost", "?"))))


def test_assistant_tool_call_turn_never_has_empty_string_content() -> None:
    body, _ = encode(request(*LOOP))
    first_assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert first_assistant["content"] is None
    assert validate_kimi_request(body, HEADERS) == []


def test_reasoning_goes_back_to_thinking_models_and_missing_reasoning_is_filled() -> None:
    history = (
        user("go"),
        assistant(Thinking("plan A"), ToolCall("t1", "read_file", {})),
        user(ToolResult("t1", "a")),
        assistant(ToolCall("t2", "list_dir", {})),  # made by Claude: no reasoning
        user(ToolResult("t2", "b")),
    )
    body, warnings = encode(request(*history, model="kimi-k2-thinking"))
    reasoning = [m.get("reasoning_content") for m in body["messages"] if m["role"] == "assistant"]
    assert reasoning == ["plan A", REASONING_PLACEHOLDER]
    assert any("placeholder" in w for w in warnings)
    assert validate_kimi_request(body, HEADERS) == []


def test_non_thinking_models_get_no_placeholder() -> None:
    body, warnings = encode(request(*LOOP[:3]))
    assert all("reasoning_content" not in m for m in body["messages"])
    assert warnings == ()


def test_tool_arguments_are_sent_as_json_text() -> None:
    body, _ = encode(request(*LOOP))
    first_call = body["messages"][1]["tool_calls"][0]
    assert json.loads(first_call["function"]["arguments"]) == {"p": 1}


# -- response rules --------------------------------------------------------------------------------


def chat_body(message: dict[str, Any], finish_reason: str | None = "stop") -> dict[str, Any]:
    return {"model": "kimi-k2", "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


def decode(message: dict[str, Any], finish_reason: str | None = "stop", req: CompletionRequest | None = None) -> Any:
    return ProviderCodec("kimi").decode(chat_body(message, finish_reason), req or request(user("go")))


def test_marker_text_becomes_tool_calls_and_leaves_the_text() -> None:
    text = (
        "Sure.\n<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>"
        '{"path": "a"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    turn = decode({"role": "assistant", "content": text})
    assert turn.text() == "Sure."
    assert [(c.id, c.name, dict(c.arguments)) for c in turn.tool_calls()] == [
        ("functions.read_file:0", "read_file", {"path": "a"})
    ]
    assert turn.stop_reason == "tool_use"


@pytest.mark.parametrize("arguments", ["", "  ", "null"])
def test_marker_call_with_empty_or_null_arguments_has_no_arguments(arguments: str) -> None:
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.ping:0<|tool_call_argument_begin|>"
        f"{arguments}<|tool_call_end|><|tool_calls_section_end|>"
    )
    [call] = decode({"role": "assistant", "content": text}).tool_calls()
    assert (call.name, dict(call.arguments)) == ("ping", {})


def test_marker_call_with_broken_json_is_kept_raw() -> None:
    text = "<|tool_call_section_begin|><|tool_call_begin|>read_file:0<|tool_call_argument_begin|>{oops<|tool_call_end|>"
    [call] = decode({"role": "assistant", "content": text}).tool_calls()
    assert call.arguments["_raw"] == "{oops"
    assert "_parse_error" in call.arguments


def test_undeclared_tool_is_kept_with_a_warning() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "x:0", "type": "function", "function": {"name": "delete_all", "arguments": "{}"}}],
    }
    turn = decode(message, "tool_calls")
    assert [c.name for c in turn.tool_calls()] == ["delete_all"]
    assert turn.warnings == ("the model called tool 'delete_all', which the request did not declare",)


@pytest.mark.parametrize("finish_reason", ["stop", None, "length"])
def test_tool_calls_force_tool_use_whatever_the_finish_reason(finish_reason: str | None) -> None:
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "read_file", "arguments": None}}],
    }
    turn = decode(message, finish_reason)
    assert turn.stop_reason == "tool_use"
    assert dict(turn.tool_calls()[0].arguments) == {}


def test_reasoning_content_becomes_a_thinking_part_not_content() -> None:
    turn = decode({"role": "assistant", "content": "42", "reasoning_content": "6 times 7"})
    assert turn.thinking() == "6 times 7"
    assert turn.text() == "42"
    assert isinstance(turn.parts[0], Thinking)
