"""The OpenAI assembler's short path for deltas that hold only text: a delta that holds anything
else beside its text (reasoning, a refusal, tool calls) still has all of it taken."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from colibri_router.wires.openai.assembly import OpenAIStreamAssembler

PIECES = st.none() | st.text(max_size=6)
DELTAS = st.fixed_dictionaries(
    {},
    optional={
        "role": st.just("assistant"),
        "content": PIECES,
        "reasoning_content": PIECES,
        "reasoning": PIECES,
        "refusal": st.none(),
    },
)


def feed(deltas: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    assembler = OpenAIStreamAssembler()
    labels = []
    for delta in deltas:
        chunk = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        label = assembler.feed("message", json.dumps(chunk))
        if label is not None:
            labels.append(label)
    assembler.feed("message", "[DONE]")
    return assembler.result()["choices"][0]["message"], labels


def joined(deltas: list[dict[str, Any]], *keys: str) -> str:
    return "".join(piece for delta in deltas for key in keys if isinstance(piece := delta.get(key), str))


@given(st.lists(DELTAS, max_size=8))
def test_text_and_reasoning_come_back_whatever_else_a_delta_holds(deltas: list[dict[str, Any]]) -> None:
    message, labels = feed(deltas)

    text, reasoning = joined(deltas, "content"), joined(deltas, "reasoning_content", "reasoning")
    assert message["content"] == (text or None)
    assert message.get("reasoning_content") == (reasoning or None)
    started = {*(["text"] if text else []), *(["thinking"] if reasoning else [])}
    # One label per chunk: a chunk that starts both blocks announces the text.
    assert set(labels) <= started
    assert bool(labels) == bool(started)


def test_a_delta_with_text_and_a_tool_call_keeps_both() -> None:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}

    message, labels = feed([{"content": "Let me look.", "tool_calls": [call]}])

    assert message["content"] == "Let me look."
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": "{}"}
    assert labels == ["tool_call f"]
