"""Deriving a wire's IDs leaves messages without tool calls or results as they are (not copied),
and still rewrites every message that has them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from colibri_router.conversation import Message, Text, ToolCall, ToolResult
from colibri_router.errors import InvalidRequestError
from colibri_router.toolcalls.ids import ids_for_claude, ids_for_kimi, ids_for_mistral, ids_for_openai

Derive = Callable[[Sequence[Message]], tuple[Message, ...]]

CONVERSATION = (
    Message("user", (Text("weather in Paris?"),)),
    Message("assistant", (Text("Checking."), ToolCall("call.1:x", "get_weather", {"city": "Paris"}))),
    Message("user", (ToolResult("call.1:x", "sunny"), Text("and tomorrow?"))),
)


@pytest.mark.parametrize("derive", [ids_for_kimi, ids_for_claude, ids_for_openai, ids_for_mistral])
def test_plain_messages_are_kept_and_tool_messages_rewritten(derive: Derive) -> None:
    derived = derive(CONVERSATION)

    assert derived[0] is CONVERSATION[0]
    call = derived[1].tool_calls()[0]
    result = derived[2].parts[0]
    assert isinstance(result, ToolResult)
    assert call.id != "call.1:x"
    assert result.call_id == call.id
    assert derived[1].parts[0] == Text("Checking.")


@pytest.mark.parametrize("derive", [ids_for_kimi, ids_for_claude, ids_for_openai, ids_for_mistral])
def test_a_conversation_without_tool_parts_comes_back_as_it_is(derive: Derive) -> None:
    plain = (Message("user", (Text("hi"),)), Message("assistant", (Text("hello"),)), Message("user", (Text("bye"),)))

    derived = derive(list(plain))

    assert derived == plain
    assert all(got is given for got, given in zip(derived, plain, strict=True))


@pytest.mark.parametrize("derive", [ids_for_kimi, ids_for_claude, ids_for_openai, ids_for_mistral])
def test_a_result_without_its_call_is_refused_even_in_an_otherwise_plain_conversation(derive: Derive) -> None:
    with pytest.raises(InvalidRequestError, match="no earlier assistant turn"):
        derive((Message("user", (Text("hi"),)), Message("user", (ToolResult("ghost", "boo"),))))
