"""Stream assembly: hand-written transcripts of real wire shapes (KIMI-FACTS.md, "Streaming") and
property tests that split known answers into random deltas and check they come back whole."""

from __future__ import annotations

import itertools
import json
import tracemalloc
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.toolcalls.assembly import (
    StreamAssembler,
    StreamCutError,
    StreamErrorEvent,
    StreamProtocolError,
)
from colibri_router.wires.anthropic.assembly import AnthropicStreamAssembler
from colibri_router.wires.openai.assembly import OpenAIStreamAssembler

Event = tuple[str, str]

# --- transcript builders -----------------------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None, **top: Any) -> dict[str, Any]:
    """One chat.completion.chunk as Moonshot sends it."""
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "kimi-k2-0905"}
    body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]
    body.update(top)
    return body


def tool_delta(index: int | None = None, call_id: str | None = None, **function: Any) -> dict[str, Any]:
    fragment: dict[str, Any] = {"function": function}
    if index is not None:
        fragment["index"] = index
    if call_id is not None:
        fragment["id"] = call_id
        fragment["type"] = "function"
    return {"tool_calls": [fragment]}


def openai_stream(*chunks: dict[str, Any], done: bool = True) -> list[Event]:
    events = [("message", json.dumps(c)) for c in chunks]
    return [*events, ("message", "[DONE]")] if done else events


def sse(event: str, **payload: Any) -> Event:
    return event, json.dumps({"type": event, **payload})


def message_start(**usage: int) -> Event:
    message: dict[str, Any] = {"id": "msg_01", "type": "message", "role": "assistant"}
    message |= {"model": "claude-sonnet-4-5", "content": [], "stop_reason": None, "stop_sequence": None}
    message["usage"] = usage or {"input_tokens": 12, "output_tokens": 1}
    return sse("message_start", message=message)


def block_start(index: int, **block: Any) -> Event:
    return sse("content_block_start", index=index, content_block=block)


def block_delta(index: int, **delta: Any) -> Event:
    return sse("content_block_delta", index=index, delta=delta)


def block_stop(index: int) -> Event:
    return sse("content_block_stop", index=index)


def message_delta(stop_reason: str | None = "end_turn", **usage: Any) -> Event:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return sse("message_delta", delta=delta, usage=usage or {"output_tokens": 20})


PING = sse("ping")
MESSAGE_STOP = sse("message_stop")


def tool_block(index: int, name: str, start_input: dict[str, Any] | None, *partials: str) -> list[Event]:
    start: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{index}", "name": name}
    if start_input is not None:
        start["input"] = start_input
    deltas = [block_delta(index, type="input_json_delta", partial_json=p) for p in partials]
    return [block_start(index, **start), *deltas, block_stop(index)]


def anthropic_stream(*blocks: list[Event]) -> list[Event]:
    return [message_start(), *(event for block in blocks for event in block), message_delta(), MESSAGE_STOP]


def feed_all(assembler: StreamAssembler, events: Iterable[Event]) -> list[str | None]:
    return [assembler.feed(event, data) for event, data in events]


def assemble_openai(events: Iterable[Event]) -> dict[str, Any]:
    assembler = OpenAIStreamAssembler()
    feed_all(assembler, events)
    return assembler.result()


def message_of(events: Iterable[Event]) -> dict[str, Any]:
    message: dict[str, Any] = assemble_openai(events)["choices"][0]["message"]
    return message


def assemble_anthropic(events: Iterable[Event]) -> dict[str, Any]:
    assembler = AnthropicStreamAssembler()
    feed_all(assembler, events)
    return assembler.result()


def tool_inputs(events: Iterable[Event]) -> list[dict[str, Any]]:
    return [block["input"] for block in assemble_anthropic(events)["content"] if block["type"] == "tool_use"]


# --- OpenAI-style: text, reasoning, usage, completion ------------------------------------------------


def test_openai_text_stream_gives_a_chat_completion_body() -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12, "cached_tokens": 0}
    events = openai_stream(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hel"}),
        chunk({"content": "lo"}),
        chunk({}, "stop"),
        {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": usage},
    )

    assert assemble_openai(events) == {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "kimi-k2-0905",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}],
        "usage": usage,
    }


def test_openai_without_text_or_usage_has_null_content_and_no_usage_key() -> None:
    body = assemble_openai(openai_stream(chunk({"role": "assistant", "content": ""}), chunk({}, "stop")))

    assert body["choices"][0]["message"] == {"role": "assistant", "content": None}
    assert "usage" not in body


def test_openai_reasoning_content_streams_before_content() -> None:
    assembler = OpenAIStreamAssembler()
    labels = feed_all(
        assembler,
        openai_stream(
            chunk({"role": "assistant", "reasoning_content": "The user "}),
            chunk({"reasoning_content": "greets."}),
            chunk({"content": "Hi!"}),
            chunk({}, "stop"),
        ),
    )

    message = assembler.result()["choices"][0]["message"]
    assert message["reasoning_content"] == "The user greets."
    assert message["content"] == "Hi!"
    assert labels == ["thinking", None, "text", None, None]


def test_openai_usage_inside_choices_is_taken() -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    last = chunk({}, "stop")
    last["choices"][0]["usage"] = usage

    assert assemble_openai(openai_stream(chunk({"content": "ok"}), last))["usage"] == usage


def test_openai_usage_that_arrived_last_wins() -> None:
    early = {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}
    final = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    last = chunk({}, "stop")
    last["choices"][0]["usage"] = final

    events = openai_stream(chunk({"content": "ok"}, usage=early), last)

    assert assemble_openai(events)["usage"] == final


def test_openai_model_and_id_come_from_the_first_chunk_that_has_them() -> None:
    first = chunk({"role": "assistant"})
    del first["model"]
    first["id"] = ""
    events = openai_stream(
        first,
        chunk({"content": "x"}, id="chatcmpl-2"),
        chunk({}, "stop", id="chatcmpl-3", model="kimi-k2-turbo-preview"),
    )

    body = assemble_openai(events)

    assert body["id"] == "chatcmpl-2"
    assert body["model"] == "kimi-k2-0905"


def test_openai_finish_reason_without_done_completes_the_stream() -> None:
    body = assemble_openai(openai_stream(chunk({"content": "done"}), chunk({}, "length"), done=False))

    assert body["choices"][0]["finish_reason"] == "length"
    assert body["choices"][0]["message"]["content"] == "done"


def test_openai_done_without_finish_reason_or_tool_calls_leaves_finish_reason_null() -> None:
    body = assemble_openai(openai_stream(chunk({"content": "x"})))

    assert body["choices"][0]["finish_reason"] is None


def test_openai_blank_keepalive_events_are_ignored() -> None:
    body = assemble_openai([("message", ""), *openai_stream(chunk({"content": "x"}), chunk({}, "stop"))])

    assert body["choices"][0]["message"]["content"] == "x"


# --- OpenAI-style: tool calls ------------------------------------------------------------------------


def test_openai_tool_call_arguments_are_concatenated_by_index() -> None:
    events = openai_stream(
        chunk(tool_delta(0, "functions.get_weather:0", name="get_weather", arguments="")),
        chunk(tool_delta(0, arguments='{"city": ')),
        chunk(tool_delta(0, arguments='"Paris"}')),
        chunk({}, "tool_calls"),
    )

    body = assemble_openai(events)

    assert body["choices"][0] == {
        "index": 0,
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "functions.get_weather:0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        "finish_reason": "tool_calls",
    }


def test_openai_name_repeated_in_every_chunk_is_taken_once() -> None:
    events = openai_stream(
        chunk(tool_delta(0, "call_1", name="mcp.fs.read", arguments='{"path"')),
        chunk(tool_delta(0, name="mcp.fs.read", arguments=': "a.txt"}')),
    )

    (call,) = message_of(events)["tool_calls"]

    assert call["function"] == {"name": "mcp.fs.read", "arguments": '{"path": "a.txt"}'}


def test_openai_fresh_id_on_every_fragment_keeps_one_call_and_its_first_id() -> None:
    # Kimi Code sends a new opaque id with every fragment of the same index.
    events = openai_stream(
        chunk(tool_delta(0, "tool_aaa", name="list-files", arguments="")),
        chunk(tool_delta(0, "tool_bbb", arguments='{"dir":')),
        chunk(tool_delta(0, "tool_ccc", arguments=' "src"}')),
    )

    (call,) = message_of(events)["tool_calls"]

    assert call["id"] == "tool_aaa"
    assert call["function"]["arguments"] == '{"dir": "src"}'


def test_openai_null_arguments_count_as_empty() -> None:
    events = openai_stream(
        chunk(tool_delta(0, "search:0", name="search", arguments=None)),
        chunk(tool_delta(0, arguments=None)),
        chunk(tool_delta(0, arguments='{"q": "k2"}')),
    )

    (call,) = message_of(events)["tool_calls"]

    assert call["function"]["arguments"] == '{"q": "k2"}'


def test_openai_indices_starting_at_one_and_sparse_are_sorted() -> None:
    events = openai_stream(
        chunk(tool_delta(3, "functions.b:1", name="b", arguments="{}")),
        chunk(tool_delta(1, "functions.a:0", name="a", arguments='{"x": 1}')),
    )

    calls = message_of(events)["tool_calls"]

    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [
        ("functions.a:0", '{"x": 1}'),
        ("functions.b:1", "{}"),
    ]


def test_openai_deltas_without_index_continue_the_open_call() -> None:
    # Databricks-hosted Kimi omits `index` on every fragment.
    events = openai_stream(
        chunk(tool_delta(None, "call_1", name="read", arguments='{"path":')),
        chunk(tool_delta(None, arguments=' "a"')),
        chunk(tool_delta(None, "call_1", name="read", arguments="}")),
    )

    (call,) = message_of(events)["tool_calls"]

    assert call["id"] == "call_1"
    assert call["function"] == {"name": "read", "arguments": '{"path": "a"}'}


def test_openai_delta_without_index_with_a_new_id_and_name_starts_a_second_call() -> None:
    events = openai_stream(
        chunk(tool_delta(None, "call_1", name="read", arguments='{"path": "a"}')),
        chunk(tool_delta(None, "call_2", name="write", arguments='{"path":')),
        chunk(tool_delta(None, arguments=' "b"}')),
    )

    calls = message_of(events)["tool_calls"]

    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("call_1", "read", '{"path": "a"}'),
        ("call_2", "write", '{"path": "b"}'),
    ]


def test_openai_delta_without_index_with_a_new_id_but_no_name_continues() -> None:
    events = openai_stream(
        chunk(tool_delta(None, "tool_a", name="read", arguments='{"path":')),
        chunk(tool_delta(None, "tool_b", arguments=' "a"}')),
    )

    (call,) = message_of(events)["tool_calls"]

    assert (call["id"], call["function"]["arguments"]) == ("tool_a", '{"path": "a"}')


def test_openai_null_finish_reason_with_tool_calls_becomes_tool_calls() -> None:
    events = openai_stream(chunk(tool_delta(0, "search:0", name="search", arguments="{}")), chunk({}))

    assert assemble_openai(events)["choices"][0]["finish_reason"] == "tool_calls"


def test_openai_labels_announce_each_new_tool_call_once() -> None:
    assembler = OpenAIStreamAssembler()
    labels = feed_all(
        assembler,
        openai_stream(
            chunk(tool_delta(0, "functions.a:0", name="a", arguments="{")),
            chunk(tool_delta(0, arguments="}")),
            chunk(tool_delta(1, "functions.b:1", arguments="")),
            chunk(tool_delta(1, name="b", arguments="{}")),
        ),
    )

    assert labels == ["tool_call a", None, "tool_call ", None, None]


def test_openai_progress_counts_text_reasoning_and_arguments() -> None:
    assembler = OpenAIStreamAssembler()
    assembler.feed("message", json.dumps(chunk({"role": "assistant", "content": ""})))
    assert (assembler.started, assembler.output_chars) == (False, 0)

    feed_all(
        assembler,
        openai_stream(
            chunk({"reasoning_content": "abc"}),
            chunk({"content": "de"}),
            chunk(tool_delta(0, "x", name="f", arguments="{}")),
            done=False,
        ),
    )

    assert (assembler.started, assembler.output_chars) == (True, 7)


def test_openai_a_tool_call_start_counts_as_started() -> None:
    assembler = OpenAIStreamAssembler()
    assembler.feed("message", json.dumps(chunk(tool_delta(0, "call_1", name="f", arguments=""))))

    assert assembler.started


# --- OpenAI-style: failures --------------------------------------------------------------------------


def test_openai_stream_without_done_or_finish_reason_is_cut() -> None:
    assembler = OpenAIStreamAssembler()
    feed_all(assembler, openai_stream(chunk({"content": "Hel"}), chunk({"content": "lo"}), done=False))

    with pytest.raises(StreamCutError, match=r"cut.*2 chunks"):
        assembler.result()


def test_openai_empty_stream_is_cut() -> None:
    with pytest.raises(StreamCutError, match="0 chunks"):
        OpenAIStreamAssembler().result()


def test_openai_error_chunk_raises_the_error_event() -> None:
    error = {"error": {"type": "engine_overloaded_error", "message": "The engine is currently overloaded"}}
    assembler = OpenAIStreamAssembler()
    assembler.feed("message", json.dumps(chunk({"content": "par"})))

    with pytest.raises(StreamErrorEvent) as caught:
        assembler.feed("message", json.dumps(error))

    assert caught.value.error_type == "engine_overloaded_error"
    assert caught.value.message == "The engine is currently overloaded"


@pytest.mark.parametrize("data", ["{not json", "[1, 2]", '"text"'])
def test_openai_data_that_is_not_a_json_object_is_a_protocol_error(data: str) -> None:
    with pytest.raises(StreamProtocolError):
        OpenAIStreamAssembler().feed("message", data)


def test_openai_feeding_after_done_is_a_protocol_error() -> None:
    assembler = OpenAIStreamAssembler()
    feed_all(assembler, openai_stream(chunk({"content": "x"}, "stop")))

    with pytest.raises(StreamProtocolError, match="after"):
        assembler.feed("message", json.dumps(chunk({"content": "y"})))


def test_openai_feeding_after_result_is_a_protocol_error() -> None:
    assembler = OpenAIStreamAssembler()
    feed_all(assembler, openai_stream(chunk({"content": "x"}, "stop"), done=False))
    assembler.result()

    with pytest.raises(StreamProtocolError):
        assembler.feed("message", "[DONE]")


def test_openai_chunks_after_finish_reason_are_still_taken() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    events = openai_stream(chunk({"content": "x"}, "stop"), {"choices": [], "usage": usage})

    assert assemble_openai(events)["usage"] == usage


# --- Anthropic-style: the content blocks -------------------------------------------------------------


def test_anthropic_claude_transcript_gives_a_message_body() -> None:
    events = [
        message_start(input_tokens=472, output_tokens=2, cache_read_input_tokens=0),
        block_start(0, type="text", text=""),
        PING,
        block_delta(0, type="text_delta", text="Let me "),
        block_delta(0, type="text_delta", text="check."),
        block_stop(0),
        *tool_block(1, "get_weather", {}, "", '{"location":', ' "San Francisco, CA"}'),
        message_delta("tool_use", output_tokens=89),
        MESSAGE_STOP,
    ]

    assert assemble_anthropic(events) == {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"location": "San Francisco, CA"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 472, "output_tokens": 89, "cache_read_input_tokens": 0},
    }


def test_anthropic_start_input_plus_the_same_json_as_delta_gives_one_object() -> None:
    # seeds/kimi-streaming-tool-args.md: concatenating both produced `{...}{...}`.
    command = {"command": "rg --files demo/rogue/original-rogue/*.c"}
    events = anthropic_stream(tool_block(0, "Bash", command, json.dumps(command)))

    assert tool_inputs(events) == [command]


def test_anthropic_start_input_only_is_used_as_is() -> None:
    events = anthropic_stream(tool_block(0, "Bash", {"command": "ls"}))

    assert tool_inputs(events) == [{"command": "ls"}]


def test_anthropic_delta_only_input_is_parsed() -> None:
    events = anthropic_stream(tool_block(0, "Bash", None, '{"comm', 'and": "ls"}'))

    assert tool_inputs(events) == [{"command": "ls"}]


def test_anthropic_empty_partial_json_does_not_hide_the_start_input() -> None:
    events = anthropic_stream(tool_block(0, "Bash", {"command": "ls"}, ""))

    assert tool_inputs(events) == [{"command": "ls"}]


def test_anthropic_tool_without_input_or_deltas_has_empty_input() -> None:
    assert tool_inputs(anthropic_stream(tool_block(0, "now", None))) == [{}]


def test_anthropic_cut_tool_json_is_kept_for_diagnosis() -> None:
    (tool_input,) = tool_inputs(anthropic_stream(tool_block(0, "Bash", {}, '{"command": "l')))

    assert tool_input["_raw"] == '{"command": "l'
    assert "_parse_error" in tool_input


def test_anthropic_thinking_block_keeps_its_signature() -> None:
    thinking = [
        block_start(0, type="thinking", thinking=""),
        block_delta(0, type="thinking_delta", thinking="Two plus "),
        block_delta(0, type="thinking_delta", thinking="two is four."),
        block_delta(0, type="signature_delta", signature="EqQBCgIYAhIM"),
        block_stop(0),
    ]

    (block,) = assemble_anthropic(anthropic_stream(thinking))["content"]

    assert block == {"type": "thinking", "thinking": "Two plus two is four.", "signature": "EqQBCgIYAhIM"}


def test_anthropic_thinking_without_signature_has_no_signature_key() -> None:
    thinking = [block_start(0, type="thinking", thinking=""), block_delta(0, type="thinking_delta", thinking="hm")]

    assert assemble_anthropic(anthropic_stream(thinking))["content"] == [{"type": "thinking", "thinking": "hm"}]


def test_anthropic_redacted_thinking_is_passed_through() -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}

    content = assemble_anthropic(anthropic_stream([block_start(0, **redacted), block_stop(0)]))["content"]

    assert content == [redacted]


def test_anthropic_blocks_are_sorted_by_index() -> None:
    events = anthropic_stream(
        [block_start(1, type="text", text=""), block_delta(1, type="text_delta", text="second")],
        [block_start(0, type="text", text=""), block_delta(0, type="text_delta", text="first")],
    )

    assert [b["text"] for b in assemble_anthropic(events)["content"]] == ["first", "second"]


def test_anthropic_pings_anywhere_are_ignored() -> None:
    events = [
        PING,
        message_start(),
        PING,
        block_start(0, type="text", text=""),
        PING,
        block_delta(0, type="text_delta", text="hi"),
        PING,
        message_delta(),
        PING,
        MESSAGE_STOP,
    ]

    assert assemble_anthropic(events)["content"] == [{"type": "text", "text": "hi"}]


def test_anthropic_unknown_events_and_delta_types_are_ignored() -> None:
    events = anthropic_stream(
        [
            block_start(0, type="text", text=""),
            block_delta(0, type="citations_delta", citation={"cited_text": "x"}),
            sse("content_block_future", index=0, anything=True),
            block_delta(0, type="text_delta", text="ok"),
            block_delta(0, type="input_json_delta", partial_json='{"not": "mine"}'),
        ]
    )

    assert assemble_anthropic(events)["content"] == [{"type": "text", "text": "ok"}]


def test_anthropic_events_without_names_use_the_payload_type() -> None:
    named = anthropic_stream([block_start(0, type="text", text=""), block_delta(0, type="text_delta", text="x")])
    unnamed = [("message", data) for _, data in named]

    assert assemble_anthropic(unnamed) == assemble_anthropic(named)


def test_anthropic_labels_progress_and_started() -> None:
    assembler = AnthropicStreamAssembler()
    labels = feed_all(
        assembler,
        [
            message_start(),
            block_start(0, type="thinking", thinking=""),
            block_delta(0, type="thinking_delta", thinking="abc"),
            block_delta(0, type="signature_delta", signature="sig"),
            block_start(1, type="text", text=""),
            block_delta(1, type="text_delta", text="de"),
            *tool_block(2, "Bash", {}, '{"a":1}'),
        ],
    )

    assert [label for label in labels if label] == ["thinking", "text", "tool_call Bash"]
    assert assembler.output_chars == 3 + 2 + len('{"a":1}')
    assert assembler.started


def test_anthropic_not_started_before_the_first_content() -> None:
    assembler = AnthropicStreamAssembler()
    feed_all(assembler, [message_start(), PING, block_start(0, type="text", text="")])

    assert (assembler.started, assembler.output_chars) == (False, 0)


# --- Anthropic-style: message_delta, completion, failures --------------------------------------------


def test_anthropic_message_delta_usage_replaces_fields_and_never_adds() -> None:
    events = [
        message_start(input_tokens=25, output_tokens=1, cache_read_input_tokens=7),
        block_start(0, type="text", text=""),
        block_delta(0, type="text_delta", text="x"),
        message_delta(None, output_tokens=15),
        message_delta("max_tokens", output_tokens=42, input_tokens=30, cache_read_input_tokens=None),
        MESSAGE_STOP,
    ]

    body = assemble_anthropic(events)

    assert body["usage"] == {"input_tokens": 30, "output_tokens": 42, "cache_read_input_tokens": 7}
    assert body["stop_reason"] == "max_tokens"


def test_anthropic_stop_sequence_is_kept() -> None:
    stop = sse("message_delta", delta={"stop_reason": "stop_sequence", "stop_sequence": "END"}, usage={})
    body = assemble_anthropic([message_start(), stop, MESSAGE_STOP])

    assert (body["stop_reason"], body["stop_sequence"]) == ("stop_sequence", "END")


def test_anthropic_stream_without_message_stop_is_cut() -> None:
    assembler = AnthropicStreamAssembler()
    feed_all(assembler, anthropic_stream(tool_block(0, "Bash", {}, '{"a":'))[:-1])

    with pytest.raises(StreamCutError, match=r"cut.*5 events.*5 output chars"):
        assembler.result()


def test_anthropic_error_event_mid_stream_raises() -> None:
    error = sse("error", error={"type": "overloaded_error", "message": "Overloaded"})
    assembler = AnthropicStreamAssembler()
    feed_all(assembler, [message_start(), block_start(0, type="text", text="")])

    with pytest.raises(StreamErrorEvent) as caught:
        assembler.feed(*error)

    assert (caught.value.error_type, caught.value.message) == ("overloaded_error", "Overloaded")
    assert str(caught.value) == "overloaded_error: Overloaded"


def test_anthropic_delta_for_a_block_that_never_started_is_a_protocol_error() -> None:
    assembler = AnthropicStreamAssembler()
    assembler.feed(*message_start())

    with pytest.raises(StreamProtocolError, match="never started"):
        assembler.feed(*block_delta(3, type="text_delta", text="x"))


def test_anthropic_data_that_is_not_json_is_a_protocol_error() -> None:
    with pytest.raises(StreamProtocolError):
        AnthropicStreamAssembler().feed("message_start", "<html>502 Bad Gateway</html>")


def test_anthropic_feeding_after_message_stop_is_a_protocol_error() -> None:
    assembler = AnthropicStreamAssembler()
    feed_all(assembler, anthropic_stream())

    with pytest.raises(StreamProtocolError, match="after"):
        assembler.feed(*PING)


def test_cut_error_is_a_protocol_error() -> None:
    assert issubclass(StreamCutError, StreamProtocolError)


# --- property tests ----------------------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
ARGUMENTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)


def split(data: st.DataObject, text: str) -> list[str]:
    """``text`` cut at random points; empty pieces included, as servers do send them."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def interleave(data: st.DataObject, streams: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A random merge that keeps each stream's own order."""
    pending = [list(stream) for stream in streams if stream]
    merged = []
    while pending:
        pick = data.draw(st.integers(0, len(pending) - 1))
        merged.append(pending[pick].pop(0))
        if not pending[pick]:
            pending.pop(pick)
    return merged


def openai_call_deltas(
    data: st.DataObject, number: int, name: str, arguments: str, *, index: int | None, repeat_name: bool, ids: str
) -> list[dict[str, Any]]:
    call_id = f"functions.{name}:{number}"
    first = data.draw(st.sampled_from(["", None]))
    deltas = [tool_delta(index, call_id, name=name, arguments=first)]
    for piece_number, piece in enumerate(split(data, arguments)):
        function = {"name": name, "arguments": piece} if repeat_name else {"arguments": piece}
        fragment_id = {"once": None, "repeat": call_id, "fresh": f"tool_{number}_{piece_number}"}[ids]
        deltas.append(tool_delta(index, fragment_id, **function))
    return deltas


@given(data=st.data())
def test_openai_random_fragments_give_back_the_calls_and_text(data: st.DataObject) -> None:
    text = data.draw(st.text(max_size=40))
    reasoning = data.draw(st.text(max_size=20))
    calls = data.draw(st.lists(st.tuples(NAMES, ARGUMENTS.map(json.dumps)), max_size=4))
    indexed = data.draw(st.booleans())
    first_index = data.draw(st.sampled_from([0, 1]))
    repeat_name = data.draw(st.booleans())
    # Without an index, a fresh id together with a name is how a new call announces itself.
    ids = data.draw(st.sampled_from(["once", "repeat"] if repeat_name and not indexed else ["once", "fresh"]))
    finish_reason = data.draw(st.sampled_from([None, "tool_calls" if calls else "stop"]))

    call_streams = [
        openai_call_deltas(
            data, n, name, args, index=first_index + n if indexed else None, repeat_name=repeat_name, ids=ids
        )
        for n, (name, args) in enumerate(calls)
    ]
    if not indexed:  # without an index, calls can only follow one another
        call_streams = [[delta for stream in call_streams for delta in stream]]
    deltas = interleave(
        data,
        [
            [{"reasoning_content": piece} for piece in split(data, reasoning)],
            [{"content": piece} for piece in split(data, text)],
            *call_streams,
        ],
    )
    chunks = [chunk({"role": "assistant", "content": ""}), *(chunk(delta) for delta in deltas)]
    if finish_reason:
        chunks.append(chunk({}, finish_reason))
    done = finish_reason is None or data.draw(st.booleans())

    message = assemble_openai(openai_stream(*chunks, done=done))["choices"][0]

    assert message["message"].get("content") == (text or None)
    assert message["message"].get("reasoning_content") == (reasoning or None)
    expected_calls = [
        {"id": f"functions.{name}:{n}", "type": "function", "function": {"name": name, "arguments": args}}
        for n, (name, args) in enumerate(calls)
    ]
    assert message["message"].get("tool_calls", []) == expected_calls
    assert message["finish_reason"] == (finish_reason or ("tool_calls" if calls else None))


TEXT_BLOCKS = st.tuples(st.just("text"), st.text(max_size=30))
THINKING_BLOCKS = st.tuples(st.just("thinking"), st.text(max_size=30), st.text("abcXYZ019+/=", max_size=12))
TOOL_BLOCKS = st.tuples(st.just("tool_use"), NAMES, ARGUMENTS, st.sampled_from(["start", "delta", "both"]))


def anthropic_block_events(data: st.DataObject, index: int, block: tuple[Any, ...]) -> list[Event]:
    match block:
        case ("text", text):
            pieces = [block_delta(index, type="text_delta", text=p) for p in split(data, text)]
            return [block_start(index, type="text", text=""), *pieces, block_stop(index)]
        case ("thinking", thinking, signature):
            pieces = [block_delta(index, type="thinking_delta", thinking=p) for p in split(data, thinking)]
            if signature:
                pieces.append(block_delta(index, type="signature_delta", signature=signature))
            return [block_start(index, type="thinking", thinking=""), *pieces, block_stop(index)]
        case ("tool_use", name, arguments, mode):
            partials = split(data, json.dumps(arguments)) if mode != "start" else []
            return tool_block(index, name, arguments if mode != "delta" else {}, *partials)
    raise AssertionError(block)


def expected_block(index: int, block: tuple[Any, ...]) -> dict[str, Any]:
    match block:
        case ("text", text):
            return {"type": "text", "text": text}
        case ("thinking", thinking, signature):
            return {"type": "thinking", "thinking": thinking} | ({"signature": signature} if signature else {})
        case ("tool_use", name, arguments, _):
            return {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": arguments}
    raise AssertionError(block)


@given(data=st.data(), blocks=st.lists(TEXT_BLOCKS | THINKING_BLOCKS | TOOL_BLOCKS, max_size=5))
def test_anthropic_random_deltas_give_back_the_blocks(data: st.DataObject, blocks: list[tuple[Any, ...]]) -> None:
    events = anthropic_stream(*(anthropic_block_events(data, i, block) for i, block in enumerate(blocks)))
    with_pings = [item for event in events for item in ([PING, event] if data.draw(st.booleans()) else [event])]

    body = assemble_anthropic(with_pings)

    assert body["content"] == [expected_block(i, block) for i, block in enumerate(blocks)]


# --- long streams ------------------------------------------------------------------------------------

LONG = 200_000
TRACED = 20_000  # only the first events run under tracemalloc, which is slow


def feed_long_stream(assembler: StreamAssembler, event: str, template: str) -> float:
    """Feed ``LONG`` argument deltas ``a0``, ``a1``...; return the bytes the assembler still holds
    per event, measured over the first ``TRACED`` events. Each event is a fresh data string (~150
    bytes), so keeping events (or their parsed dicts) costs far more than the 2-char fragment and
    its list slot (~60 bytes)."""
    events = ((event, template % (i % 10)) for i in range(LONG))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for name, data in itertools.islice(events, TRACED):
            assembler.feed(name, data)
        per_event = (tracemalloc.get_traced_memory()[0] - before) / TRACED
    finally:
        tracemalloc.stop()
    for name, data in events:
        assembler.feed(name, data)
    return per_event


LONG_BLOB = "".join(f"a{i % 10}" for i in range(LONG))


def test_openai_long_argument_stream_keeps_only_the_fragments() -> None:
    template = (
        '{"object":"chat.completion.chunk","choices":[{"index":0,'
        '"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a%d"}}]},"finish_reason":null}]}'
    )
    assembler = OpenAIStreamAssembler()
    assembler.feed("message", json.dumps(chunk(tool_delta(0, "call_1", name="write", arguments='{"blob": "'))))

    per_event = feed_long_stream(assembler, "message", template)
    feed_all(assembler, openai_stream(chunk(tool_delta(0, arguments='"}'), "tool_calls")))

    (call,) = assembler.result()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"blob": LONG_BLOB}
    assert assembler.output_chars == len(call["function"]["arguments"])
    assert per_event < 100


def test_anthropic_long_input_json_stream_keeps_only_the_fragments() -> None:
    template = '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"a%d"}}'
    assembler = AnthropicStreamAssembler()
    feed_all(assembler, [message_start(), *tool_block(0, "write", {}, '{"blob": "')[:-1]])

    per_event = feed_long_stream(assembler, "content_block_delta", template)
    feed_all(assembler, [block_delta(0, type="input_json_delta", partial_json='"}'), message_delta(), MESSAGE_STOP])

    (block,) = assembler.result()["content"]
    assert block["input"] == {"blob": LONG_BLOB}
    assert per_event < 100
