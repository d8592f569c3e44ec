"""The Cohere v2 and Ollama wires: request rules, named-event SSE and NDJSON streams, their round trips."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fake_upstream import (
    FakeUpstream,
    cohere_call_id,
    cohere_sse_events,
    cohere_text,
    cohere_tool_calls,
    ollama_call_id,
    ollama_ndjson_lines,
    ollama_text,
    ollama_tool_calls,
    validate_cohere_request,
    validate_ollama_request,
)
from fake_wire import chat_url, post, read_cohere_stream, read_ollama_lines, simple_body, sse
from hypothesis import given
from hypothesis import strategies as st

# --- Cohere ----------------------------------------------------------------------------------------------

USER = {"role": "user", "content": "go"}
CALL = {"id": "read_abc123def456", "type": "function", "function": {"name": "read", "arguments": "{}"}}
CALLING = {"role": "assistant", "tool_plan": "I will read.", "tool_calls": [CALL]}
RESULT = {"role": "tool", "tool_call_id": "read_abc123def456", "content": [{"type": "text", "text": "x"}]}


def cohere_body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "model": "command-a-03-2025",
        "messages": [{"role": "system", "content": "be brief"}, USER, *messages],
        **fields,
    }


@pytest.mark.parametrize(
    "request_body",
    [
        cohere_body(),
        cohere_body(CALLING, RESULT, {"role": "assistant", "content": "done"}, USER, tool_choice="REQUIRED"),
        cohere_body(tool_choice="NONE", stream=True, thinking={"type": "enabled", "token_budget": 2000}),
    ],
)
def test_cohere_accepts(request_body: dict[str, Any]) -> None:
    assert validate_cohere_request(request_body) == []


@pytest.mark.parametrize(
    ("request_body", "problem"),
    [
        (cohere_body(tool_choice="auto"), "tool_choice must be one of REQUIRED, NONE, got 'auto'"),
        (cohere_body(tool_choice={"type": "function", "function": {"name": "read"}}), "tool_choice must be one of"),
        (cohere_body({"role": "developer", "content": "x"}), "messages[2].role must be one of"),
        (cohere_body(CALLING, {"role": "tool", "content": "x"}), "messages[3].tool_call_id is required"),
        (cohere_body(CALLING, USER, RESULT), "did not have response messages: read_abc123def456"),
        (cohere_body(RESULT), "messages with role 'tool' must be a response to a preceding message"),
        ({"messages": [USER]}, "model must be a non-empty string"),
    ],
)
def test_cohere_refuses(request_body: dict[str, Any], problem: str) -> None:
    problems = validate_cohere_request(request_body)
    assert problems[0].startswith("invalid request: ")
    assert problem in problems[0]


def test_cohere_refusals_are_flat(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    refused = post(client, fake_upstream, "cohere", cohere_body(tool_choice="ANY"))
    assert refused.status_code == 400
    assert refused.json() == {"message": "invalid request: tool_choice must be one of REQUIRED, NONE, got 'ANY'"}


def test_cohere_streams_named_events(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    reply = cohere_tool_calls(
        [(cohere_call_id("read"), "read", '{"path": "a"}'), (cohere_call_id("list"), "list", "{}")],
        tool_plan="Read, then list.",
        thinking="Two steps.",
    )
    fake_upstream.cohere.enqueue(reply)
    events = sse(client, fake_upstream, "cohere", cohere_body(stream=True))
    names = [e.event for e in events]
    collapsed = [n for i, n in enumerate(names) if i == 0 or n != names[i - 1]]
    calls = ["tool-call-start", "tool-call-delta", "tool-call-end"]
    content = ["content-start", "content-delta", "content-end"]
    assert collapsed == ["message-start", *content, "tool-plan-delta", *calls, *calls, "message-end"]
    assert all(e.json()["type"] == e.event for e in events)
    start = next(e.json() for e in events if e.event == "tool-call-start")
    assert start["delta"]["message"]["tool_calls"] == {
        "id": reply.body["message"]["tool_calls"][0]["id"],
        "type": "function",
        "function": {"name": "read", "arguments": ""},
    }
    end = events[-1].json()["delta"]
    assert end["finish_reason"] == "TOOL_CALL"
    assert end["usage"] == {
        "billed_units": {"input_tokens": 20, "output_tokens": 10},
        "tokens": {"input_tokens": 20, "output_tokens": 10},
    }
    read = read_cohere_stream((e.event, e.data) for e in events)
    assert read["message"]["tool_calls"] == reply.body["message"]["tool_calls"]
    assert read["message"]["content"] == [{"type": "thinking", "thinking": "Two steps."}]


def test_cohere_ids_have_the_service_shape() -> None:
    call_id = cohere_call_id("get_weather")
    assert call_id.startswith("get_weather_") and len(call_id) == len("get_weather_") + 12
    assert call_id[len("get_weather_") :].isalnum() and call_id.islower()


@given(
    text=st.text(max_size=30),
    thinking=st.one_of(st.none(), st.text(max_size=20)),
    plan=st.one_of(st.none(), st.text(max_size=20)),
    calls=st.lists(
        st.tuples(st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.dictionaries(st.text(max_size=4), st.integers())),
        max_size=3,
    ),
)
def test_any_cohere_body_streams_back_to_itself(
    text: str, thinking: str | None, plan: str | None, calls: list[tuple[str, dict[str, int]]]
) -> None:
    if calls:
        specs = [(cohere_call_id(name), name, json.dumps(args)) for name, args in calls]
        reply = cohere_tool_calls(specs, tool_plan=plan, thinking=thinking)
    else:
        reply = cohere_text(text, thinking=thinking)
    read = read_cohere_stream(cohere_sse_events(reply.body))
    message = reply.body["message"]
    assert read["message"]["content"] == message.get("content", [])
    assert read["message"]["tool_calls"] == message.get("tool_calls", [])
    assert read["message"]["tool_plan"] == (message.get("tool_plan") or "")
    assert (read["finish"], read["usage"]) == (reply.body["finish_reason"], reply.body["usage"])


# --- Ollama ----------------------------------------------------------------------------------------------


def ollama_body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"model": "llama3.2", "messages": [USER, *messages], "options": {"num_ctx": 8192}, **fields}


def ndjson(fake: FakeUpstream, client: httpx.Client, request_body: dict[str, Any]) -> list[dict[str, Any]]:
    with client.stream("POST", chat_url(fake, "ollama"), json=request_body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/x-ndjson"
        return [json.loads(line) for line in response.iter_lines() if line]


OLLAMA_CALL = {"function": {"name": "read", "arguments": {"path": "a"}}}


@pytest.mark.parametrize(
    "request_body",
    [
        ollama_body(),
        ollama_body(
            {"role": "assistant", "content": "", "tool_calls": [OLLAMA_CALL]},
            {"role": "tool", "tool_name": "read", "content": "x"},
        ),
        ollama_body(model="qwen3:8b", think=True, stream=False),
        ollama_body(think=False),
    ],
)
def test_ollama_accepts(fake_upstream: FakeUpstream, request_body: dict[str, Any]) -> None:
    assert validate_ollama_request(request_body, thinking_models=fake_upstream.ollama.thinking_models) == []


@pytest.mark.parametrize(
    ("request_body", "problem"),
    [
        ({"messages": [USER]}, "model is required"),
        (
            ollama_body(
                {"role": "assistant", "tool_calls": [{"function": {"name": "read", "arguments": '{"path": "a"}'}}]}
            ),
            "messages[1]: json: cannot unmarshal string into Go struct field",
        ),
        (ollama_body({"role": "tool", "content": "x"}), "messages[1]: a tool message needs tool_name"),
        (ollama_body(think=True), '"llama3.2" does not support thinking'),
    ],
)
def test_ollama_refuses(
    fake_upstream: FakeUpstream, client: httpx.Client, request_body: dict[str, Any], problem: str
) -> None:
    refused = client.post(chat_url(fake_upstream, "ollama"), json=request_body)
    assert refused.status_code == 400
    assert set(refused.json()) == {"error"}
    assert problem in refused.json()["error"]
    assert fake_upstream.violations == [f"ollama: {refused.json()['error']}"]


def test_ollama_streams_ndjson_by_default_and_json_on_request(
    fake_upstream: FakeUpstream, client: httpx.Client
) -> None:
    reply = ollama_tool_calls([("read", {"path": "a"}), ("list", {})], text="Looking.", thinking="Plan.")
    fake_upstream.ollama.enqueue(reply, reply)
    lines = ndjson(fake_upstream, client, ollama_body())
    assert [line["done"] for line in lines] == [False] * (len(lines) - 1) + [True]
    call_lines = [line["message"]["tool_calls"] for line in lines if "tool_calls" in line["message"]]
    assert call_lines == [[call] for call in reply.body["message"]["tool_calls"]]  # whole, one per line
    assert isinstance(call_lines[0][0]["function"]["arguments"], dict)
    final = lines[-1]
    assert (final["done_reason"], final["prompt_eval_count"], final["eval_count"]) == ("stop", 20, 10)
    read = read_ollama_lines(lines)
    assert (read["content"], read["thinking"]) == ("Looking.", "Plan.")
    plain = client.post(chat_url(fake_upstream, "ollama"), json=ollama_body(stream=False)).json()
    assert plain == reply.body


def test_ollama_ids_are_optional(fake_upstream: FakeUpstream) -> None:
    with_ids = ollama_tool_calls([("read", {})]).body["message"]["tool_calls"][0]
    assert with_ids["id"].startswith("call_") and len(with_ids["id"]) == 13
    assert "id" not in ollama_tool_calls([("read", {})], ids=False).body["message"]["tool_calls"][0]
    assert ollama_call_id() != ollama_call_id()


def test_ollama_without_num_ctx_answers_but_records_the_truncation(
    fake_upstream: FakeUpstream, client: httpx.Client
) -> None:
    long_prompt = ollama_body() | {"messages": [{"role": "user", "content": "word " * 40_000}], "stream": False}
    del long_prompt["options"]
    answer = client.post(chat_url(fake_upstream, "ollama"), json=long_prompt).json()
    assert answer["prompt_eval_count"] == 4096  # what the server kept of a ~50k-token prompt
    assert fake_upstream.violations == [
        "ollama: options.num_ctx is missing: Ollama silently truncates the prompt to 4096 tokens"
    ]
    roomy = long_prompt | {"options": {"num_ctx": 65536}}
    assert client.post(chat_url(fake_upstream, "ollama"), json=roomy).json()["prompt_eval_count"] > 4096
    assert fake_upstream.ollama.num_ctx_values == [None, 65536]


def test_ollama_thinking_models_think_unless_told_not_to(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    thinking = client.post(chat_url(fake_upstream, "ollama"), json=ollama_body(model="qwen3", stream=False)).json()
    assert thinking["message"]["thinking"] == "The user said: go"
    quiet = client.post(chat_url(fake_upstream, "ollama"), json=ollama_body(model="qwen3", think=False, stream=False))
    assert "thinking" not in quiet.json()["message"]
    fake_upstream.ollama.thinking_models = {"llama3.2"}
    assert post(client, fake_upstream, "ollama", simple_body("ollama", think=True, stream=False)).status_code == 200


@given(
    text=st.text(max_size=30),
    thinking=st.one_of(st.none(), st.text(max_size=20)),
    calls=st.lists(
        st.tuples(st.text(min_size=1, max_size=6), st.dictionaries(st.text(max_size=4), st.integers())), max_size=3
    ),
    ids=st.booleans(),
)
def test_any_ollama_body_streams_back_to_itself(
    text: str, thinking: str | None, calls: list[tuple[str, dict[str, int]]], ids: bool
) -> None:
    reply = (
        ollama_tool_calls(calls, text=text, thinking=thinking, ids=ids)
        if calls
        else ollama_text(text, thinking=thinking)
    )
    read = read_ollama_lines(json.loads(json.dumps(line)) for line in ollama_ndjson_lines(reply.body))
    message = reply.body["message"]
    assert (read["content"], read["thinking"]) == (message["content"], message.get("thinking") or "")
    assert read["tool_calls"] == message.get("tool_calls", [])
    assert {k: v for k, v in read["final"].items() if k != "message"} == {
        k: v for k, v in reply.body.items() if k != "message"
    }
