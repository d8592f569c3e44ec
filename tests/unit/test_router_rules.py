"""Provider-neutral rules of the router: request building and neutral IDs (choice: test_providers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from colibri_router.conversation import AssistantTurn, Message, Text, ToolCall, ToolResult
from colibri_router.errors import InvalidRequestError
from colibri_router.router import build_request, with_neutral_ids
from colibri_router.router.call import Call, call_from
from colibri_router.schema import RouterCallInput

TOOL = {"name": "read_file", "input_schema": {"type": "object"}}


def args(**fields: Any) -> Call:
    return call_from(RouterCallInput.model_validate(fields))


def test_prompt_is_a_single_user_turn_with_defaults() -> None:
    request, warnings = build_request(args(prompt="hi"), "default-model")
    assert request.messages == (Message("user", (Text("hi"),)),)
    assert (request.model, request.max_tokens, request.tools, request.tool_choice) == ("default-model", 1024, (), None)
    assert warnings == []


def test_history_tools_are_declared_and_disabled_when_the_call_gives_none() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
    ]
    request, warnings = build_request(args(messages=messages), "m")
    assert [t.name for t in request.tools] == ["read_file"]
    assert request.tools[0].input_schema == {"type": "object"}
    assert request.tool_choice is not None
    assert request.tool_choice.mode == "none"
    assert len(warnings) == 1


def test_tool_choice_without_tools_is_dropped_with_a_warning() -> None:
    request, warnings = build_request(args(prompt="hi", tool_choice="required"), "m")
    assert request.tool_choice is None
    assert warnings == ["tool_choice ignored: the call gave no tools"]


def test_named_tool_choice_must_name_a_given_tool() -> None:
    with pytest.raises(InvalidRequestError, match="nope"):
        build_request(args(prompt="hi", tools=[TOOL], tool_choice={"type": "tool", "name": "nope"}), "m")


def test_tool_result_content_blocks_are_joined() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "read_file"}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "a",
                    "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}],
                }
            ],
        },
    ]
    request, _ = build_request(args(messages=messages, tools=[TOOL]), "m")
    assert request.messages[2].parts == (ToolResult("a", "xy"),)


def test_new_calls_get_neutral_ids_that_do_not_collide_with_history() -> None:
    history = (Message("assistant", (ToolCall("functions_read_file_0", "read_file", {}),)),)
    turn = AssistantTurn(
        parts=(Text("t"), ToolCall("functions.read_file:0", "read_file", {}), ToolCall("toolu_1", "x", {})),
        stop_reason="tool_use",
        model="m",
    )
    neutral = with_neutral_ids(turn, history)
    ids = [c.id for c in neutral.tool_calls()]
    assert ids[0] != "functions_read_file_0"
    assert ids[0].startswith("functions_read_file_0")
    assert ids[1] == "toolu_1"
    assert neutral.parts[0] == Text("t")
