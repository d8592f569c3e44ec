"""Tool-call arguments as providers send them → the object the host reads: JSON null in any form is
"no arguments", anything else that is not an object is kept raw with the reason, and warned about."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.conversation import ToolCall
from colibri_router.schema import InputMessage
from colibri_router.toolcalls.arguments import arguments_object, parse_arguments, unreadable_calls_warning

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
)
NOT_OBJECTS = JSON_VALUES.filter(lambda value: value is not None and not isinstance(value, dict))


@pytest.mark.parametrize("said", [None, "", "   ", "null", " null\n"])
def test_null_in_every_form_is_no_arguments(said: str | None) -> None:
    assert parse_arguments(said) == {}
    assert arguments_object(said) == {}


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=4))
def test_an_object_is_read_whether_sent_as_text_or_as_an_object(value: dict[str, Any]) -> None:
    assert parse_arguments(json.dumps(value)) == value
    assert arguments_object(value) == value
    assert arguments_object(json.dumps(value)) == value


@given(NOT_OBJECTS)
def test_json_that_is_no_object_is_kept_raw_with_the_reason(value: object) -> None:
    text = json.dumps(value)
    # A string field is JSON text, never a JSON string value: only other values are decoded as sent.
    as_sent = [] if isinstance(value, str) else [arguments_object(value)]
    for parsed in (parse_arguments(text), arguments_object(text), *as_sent):
        assert set(parsed) == {"_parse_error", "_raw"}
        assert parsed["_parse_error"].endswith("not an object")
        assert json.loads(parsed["_raw"]) == value


@pytest.mark.parametrize(("value", "kind"), [([1, 2], "array"), ("text", "string"), (42, "number"), (True, "boolean")])
def test_the_reason_names_the_json_type(value: object, kind: str) -> None:
    assert parse_arguments(json.dumps(value))["_parse_error"] == f"arguments are a JSON {kind}, not an object"


def test_text_that_is_not_json_is_kept_raw() -> None:
    parsed = parse_arguments('{"a": 1')
    assert parsed["_raw"] == '{"a": 1'
    assert "Expecting" in parsed["_parse_error"]


def test_the_warning_names_each_unreadable_call_and_only_those() -> None:
    calls = [
        ToolCall("call_1", "ping", {}),
        ToolCall("call_2", "add", parse_arguments("[1, 2]")),
        ToolCall("call_3", "add", parse_arguments("{oops")),
    ]
    warning = unreadable_calls_warning(calls)
    assert warning is not None
    assert "add (call_2), add (call_3)" in warning
    assert "ping" not in warning
    assert unreadable_calls_warning(calls[:1]) is None


def test_a_history_tool_use_with_null_input_has_no_arguments() -> None:
    message = InputMessage.model_validate(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ping", "input": None}]}
    ).to_message()
    assert message.tool_calls()[0].arguments == {}
