"""Tests of the loopback fake upstream itself: replies, streams, cuts, disconnects, load, validation."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_sse_events,
    anthropic_text,
    anthropic_tool_use,
    error,
    kimi_sse_events,
    kimi_text,
    kimi_tool_calls,
    raw_body,
    raw_stream,
    validate_anthropic_request,
    validate_kimi_request,
)
from httpx_sse import ServerSentEvent, connect_sse

KIMI_PATH = "/kimi/v1/chat/completions"
ANTHROPIC_PATH = "/anthropic/v1/messages"
KIMI_HEADERS = {"Authorization": "Bearer sk-test"}
ANTHROPIC_HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
READ_TOOL_KIMI = {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}
READ_TOOL_ANTHROPIC = {"name": "read", "input_schema": {"type": "object"}}


def kimi_body(text: str = "hi", **fields: Any) -> dict[str, Any]:
    return {"model": "kimi-k2-0905-preview", "messages": [{"role": "user", "content": text}], **fields}


def anthropic_body(text: str = "hi", **fields: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": text}]} | fields


@pytest.fixture
def client(fake_upstream: FakeUpstream) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake_upstream.url, timeout=5) as client:
        yield client


def post(client: httpx.Client, route: str, body: dict[str, Any]) -> httpx.Response:
    if route == "kimi":
        return client.post(KIMI_PATH, json=body, headers=KIMI_HEADERS)
    return client.post(ANTHROPIC_PATH, json=body, headers=ANTHROPIC_HEADERS)


def stream_events(client: httpx.Client, path: str, body: dict[str, Any]) -> list[ServerSentEvent]:
    headers = KIMI_HEADERS if path == KIMI_PATH else ANTHROPIC_HEADERS
    with connect_sse(client, "POST", path, json=body, headers=headers) as source:
        assert source.response.headers["content-type"] == "text/event-stream"
        return list(source.iter_sse())


# --- replies -------------------------------------------------------------------------------------------


def test_base_urls_point_at_the_routes(fake_upstream: FakeUpstream) -> None:
    assert fake_upstream.url.startswith("http://127.0.0.1:")
    assert fake_upstream.kimi_base_url + "/chat/completions" == fake_upstream.url + KIMI_PATH
    assert fake_upstream.anthropic_base_url + "/v1/messages" == fake_upstream.url + ANTHROPIC_PATH


def test_default_replies_echo_the_last_user_text(client: httpx.Client) -> None:
    kimi = post(client, "kimi", kimi_body("ping")).json()
    assert kimi["object"] == "chat.completion"
    assert kimi["choices"][0]["message"] == {"role": "assistant", "content": "echo: ping"}
    assert kimi["usage"]["total_tokens"] == kimi["usage"]["prompt_tokens"] + kimi["usage"]["completion_tokens"]

    blocks = [{"type": "text", "text": "pi"}, {"type": "text", "text": "ng"}]
    claude = post(client, "anthropic", anthropic_body(messages=[{"role": "user", "content": blocks}])).json()
    assert claude["type"] == "message"
    assert claude["content"] == [{"type": "text", "text": "echo: ping"}]
    assert claude["usage"]["input_tokens"] > 0


def test_scripted_replies_come_in_order_then_the_default(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.kimi.enqueue(kimi_text("one"), kimi_tool_calls([("functions.read:0", "read", "{}")]))
    answers = [post(client, "kimi", kimi_body()).json()["choices"][0] for _ in range(3)]
    assert answers[0]["message"]["content"] == "one"
    assert answers[1]["finish_reason"] == "tool_calls"
    assert answers[1]["message"]["content"] == ""  # as Moonshot sends it
    assert answers[1]["message"]["tool_calls"][0]["function"] == {"name": "read", "arguments": "{}"}
    assert answers[2]["message"]["content"] == "echo: hi"


def test_requests_are_recorded_and_reset_forgets_them(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("scripted"))
    post(client, "kimi", kimi_body("a"))
    post(client, "anthropic", anthropic_body("b"))
    [kimi] = fake_upstream.kimi.requests
    assert (kimi.method, kimi.path, kimi.headers["authorization"]) == ("POST", KIMI_PATH, "Bearer sk-test")
    assert kimi.body == kimi_body("a")
    assert fake_upstream.anthropic.requests[0].headers["x-api-key"] == "sk-ant-test"
    assert [r.route for r in fake_upstream.requests] == ["kimi", "anthropic"]

    fake_upstream.anthropic.enqueue(anthropic_text("never sent"))
    fake_upstream.reset()
    assert fake_upstream.requests == fake_upstream.kimi.requests == []
    assert post(client, "anthropic", anthropic_body("c")).json()["content"][0]["text"] == "echo: c"


def test_kimi_stream_is_generated_from_the_body(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    reply = kimi_tool_calls(
        [("functions.read:0", "read", '{"path": "a.txt"}'), ("functions.mcp.fs-list:1", "mcp.fs-list", "{}")],
        text="Let me look.",
        reasoning="I need the file.",
        model="kimi-k2-thinking",
    )
    fake_upstream.kimi.enqueue(reply)
    events = stream_events(client, KIMI_PATH, kimi_body(stream=True))
    assert [e.data for e in events] == kimi_sse_events(reply.body)

    assert events[-1].data == "[DONE]"
    chunks = [json.loads(e.data) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == reply.body["usage"]
    assert chunks[-2]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    deltas = [c["choices"][0]["delta"] for c in chunks[:-2]]
    assert deltas[0] == {"role": "assistant", "content": ""}
    kinds = [next(iter(d)) for d in deltas[1:]]
    assert kinds == sorted(kinds, key=["reasoning_content", "content", "tool_calls"].index)
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "I need the file."
    assert "".join(d.get("content", "") for d in deltas[1:]) == "Let me look."

    calls: dict[int, dict[str, Any]] = {}
    fragments = [part for d in deltas for part in d.get("tool_calls", [])]
    for part in fragments:
        if part["index"] not in calls:  # the first fragment names the call, the others carry arguments only
            calls[part["index"]] = {"id": part["id"], "name": part["function"]["name"], "arguments": ""}
        else:
            assert set(part) == {"index", "function"}
        calls[part["index"]]["arguments"] += part["function"]["arguments"]
    assert [part["index"] for part in fragments].count(0) > 2
    assert calls == {
        0: {"id": "functions.read:0", "name": "read", "arguments": '{"path": "a.txt"}'},
        1: {"id": "functions.mcp.fs-list:1", "name": "mcp.fs-list", "arguments": "{}"},
    }


def test_anthropic_stream_is_generated_from_the_body(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    reply = anthropic_tool_use([("toolu_01", "read", {"path": "a.txt"})], text="Reading.", thinking="I need it.")
    fake_upstream.anthropic.enqueue(reply)
    events = stream_events(client, ANTHROPIC_PATH, anthropic_body(stream=True))
    assert [(e.event, e.data) for e in events] == anthropic_sse_events(reply.body)

    block = ["content_block_start", "content_block_delta", "content_block_stop"]
    names = [e.event for e in events]
    collapsed = [n for i, n in enumerate(names) if i == 0 or n != names[i - 1]]
    assert collapsed == ["message_start", "ping", *block * 3, "message_delta", "message_stop"]
    data = [e.json() for e in events]
    assert data[0]["message"]["content"] == []
    assert data[-2]["delta"]["stop_reason"] == "tool_use"
    assert data[-2]["usage"] == {"output_tokens": 10}

    starts = [d["content_block"] for d in data if d["type"] == "content_block_start"]
    assert starts[2] == {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {}}
    deltas: dict[int, list[dict[str, Any]]] = {}
    for d in data:
        if d["type"] == "content_block_delta":
            deltas.setdefault(d["index"], []).append(d["delta"])
    assert "".join(d.get("thinking", "") for d in deltas[0]) == "I need it."
    assert deltas[0][-1] == {"type": "signature_delta", "signature": reply.body["content"][0]["signature"]}
    assert "".join(d["text"] for d in deltas[1]) == "Reading."
    assert len(deltas[2]) > 1
    assert json.loads("".join(d["partial_json"] for d in deltas[2])) == {"path": "a.txt"}


@pytest.mark.parametrize(
    ("route", "status", "error_type", "expected_body"),
    [
        ("kimi", 429, "engine_overloaded_error", {"error": {"type": "engine_overloaded_error", "message": "m"}}),
        (
            "anthropic",
            529,
            "overloaded_error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "m"}, "request_id": "req_fake"},
        ),
    ],
)
def test_error_replies_use_the_route_shape_and_headers(
    fake_upstream: FakeUpstream,
    client: httpx.Client,
    route: str,
    status: int,
    error_type: str,
    expected_body: dict[str, Any],
) -> None:
    getattr(fake_upstream, route).enqueue(
        error(status, error_type=error_type, message="m", headers={"Retry-After": "2"})
    )
    response = post(client, route, kimi_body(stream=True) if route == "kimi" else anthropic_body(stream=True))
    assert response.status_code == status
    assert response.headers["retry-after"] == "2"
    assert response.json() == expected_body


def test_raw_bodies_are_sent_as_given(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.kimi.enqueue(raw_body(200, b"not json"), raw_body(200, b'{"choices": []}'))
    malformed = post(client, "kimi", kimi_body())
    assert (malformed.status_code, malformed.text) == (200, "not json")
    assert post(client, "kimi", kimi_body()).json() == {"choices": []}


def test_raw_stream_frames_may_be_split_across_reads(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.anthropic.enqueue(
        raw_stream([b'event: ping\ndata: {"ty', b'pe": "ping"}\n', b"\n", ("message_stop", "{}")], event_delay_s=0.05)
    )
    events = stream_events(client, ANTHROPIC_PATH, anthropic_body(stream=True))
    assert [(e.event, e.data) for e in events] == [("ping", '{"type": "ping"}'), ("message_stop", "{}")]


@pytest.mark.parametrize(
    ("path", "body", "events"),
    [
        (KIMI_PATH, kimi_body(stream=True), kimi_sse_events(kimi_text("a longer answer to cut").body)),
        (
            ANTHROPIC_PATH,
            anthropic_body(stream=True),
            anthropic_sse_events(anthropic_text("a longer answer to cut").body),
        ),
    ],
)
def test_a_cut_stream_ends_without_its_terminal_event(
    fake_upstream: FakeUpstream, client: httpx.Client, path: str, body: dict[str, Any], events: list[Any]
) -> None:
    route = fake_upstream.kimi if path == KIMI_PATH else fake_upstream.anthropic
    route.enqueue(raw_stream(events, drop_after=3))
    headers = KIMI_HEADERS if path == KIMI_PATH else ANTHROPIC_HEADERS
    received: list[ServerSentEvent] = []
    with (
        pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"),
        connect_sse(client, "POST", path, json=body, headers=headers) as source,
    ):
        received.extend(source.iter_sse())
    assert [e.data for e in received] == [e if isinstance(e, str) else e[1] for e in events[:3]]


def test_a_held_open_stream_pings_before_answering(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.kimi.enqueue(kimi_text("late", hold_open_s=0.3))
    started = time.monotonic()
    with client.stream("POST", KIMI_PATH, json=kimi_body(stream=True), headers=KIMI_HEADERS) as response:
        lines = list(response.iter_lines())
    assert time.monotonic() - started >= 0.3
    assert lines[0] == ": ping"
    assert lines.count(": ping") >= 3
    assert lines[-2:] == ["data: [DONE]", ""]


def test_a_client_closing_a_stream_is_seen_within_a_second(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("never finished", hold_open_s=30))
    body = anthropic_body(stream=True)
    with client.stream("POST", ANTHROPIC_PATH, json=body, headers=ANTHROPIC_HEADERS) as response:
        assert next(response.iter_lines()) == "event: ping"
    closed_at = time.monotonic()
    disconnect = fake_upstream.wait_disconnect(timeout=1.0)
    assert disconnect is not None
    assert (disconnect.route, disconnect.path) == ("anthropic", ANTHROPIC_PATH)
    assert disconnect.at - closed_at < 1.0


async def test_a_cancelled_call_is_seen_during_the_delay(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("too late", delay_s=30))
    async with httpx.AsyncClient(base_url=fake_upstream.url) as client:
        call = asyncio.create_task(client.post(KIMI_PATH, json=kimi_body(), headers=KIMI_HEADERS))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        cancelled_at = time.monotonic()
    disconnect = await asyncio.to_thread(fake_upstream.wait_disconnect, 1.0)
    assert disconnect is not None
    assert disconnect.at - cancelled_at < 1.0
    assert fake_upstream.disconnects == [disconnect]


async def test_hundred_concurrent_calls_overlap(fake_upstream: FakeUpstream) -> None:
    fake_upstream.latency_s = 0.2
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=fake_upstream.url, limits=httpx.Limits(max_connections=200)) as client:
        responses = await asyncio.gather(
            *(client.post(KIMI_PATH, json=kimi_body(f"n{i}"), headers=KIMI_HEADERS) for i in range(50)),
            *(client.post(ANTHROPIC_PATH, json=anthropic_body(f"n{i}"), headers=ANTHROPIC_HEADERS) for i in range(50)),
        )
    elapsed = time.monotonic() - started
    assert [r.status_code for r in responses] == [200] * 100
    assert responses[49].json()["choices"][0]["message"]["content"] == "echo: n49"
    assert responses[99].json()["content"][0]["text"] == "echo: n49"
    assert len(fake_upstream.requests) == 100
    assert 0.2 <= elapsed < 5


def test_stop_ends_a_held_open_stream_and_frees_the_port() -> None:
    fake = FakeUpstream().start()
    fake.kimi.enqueue(kimi_text("never", hold_open_s=30))
    with httpx.Client(base_url=fake.url) as client:
        with client.stream("POST", KIMI_PATH, json=kimi_body(stream=True), headers=KIMI_HEADERS) as response:
            next(response.iter_lines())
            started = time.monotonic()
            fake.stop()
            assert time.monotonic() - started < 1.0
        with pytest.raises(httpx.ConnectError):
            client.post(KIMI_PATH, json=kimi_body(), headers=KIMI_HEADERS)


# --- validation over HTTP -------------------------------------------------------------------------------


def test_kimi_refuses_a_missing_key_without_using_the_script(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.kimi.enqueue(kimi_text("scripted"))
    refused = client.post(KIMI_PATH, json=kimi_body())
    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "invalid_authentication_error"
    assert fake_upstream.violations == ["kimi: Invalid Authentication: missing 'Authorization: Bearer <key>' header"]
    assert post(client, "kimi", kimi_body()).json()["choices"][0]["message"]["content"] == "scripted"


def test_kimi_refuses_a_thinking_tool_call_without_reasoning(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    body = {"model": "kimi-k2-thinking", "messages": kimi_loop(), "tools": [READ_TOOL_KIMI]}
    refused = post(client, "kimi", body)
    assert refused.status_code == 400
    assert refused.json() == {
        "error": {
            "type": "invalid_request_error",
            "message": "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
        }
    }
    assert len(fake_upstream.violations) == 1


@pytest.mark.parametrize(
    ("headers", "status", "error_type"),
    [
        ({"anthropic-version": "2023-06-01"}, 401, "authentication_error"),
        ({"x-api-key": "sk-ant-test"}, 400, "invalid_request_error"),
    ],
)
def test_anthropic_refuses_missing_headers(
    fake_upstream: FakeUpstream, client: httpx.Client, headers: dict[str, str], status: int, error_type: str
) -> None:
    refused = client.post(ANTHROPIC_PATH, json=anthropic_body(), headers=headers)
    assert refused.status_code == status
    assert refused.json()["type"] == "error"
    assert refused.json()["error"]["type"] == error_type
    assert fake_upstream.violations[0].startswith("anthropic: ")


def test_an_unknown_path_is_a_404_and_a_violation(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    assert client.post("/v1/chat/completions", json=kimi_body()).status_code == 404
    assert fake_upstream.violations == ["unknown route POST /v1/chat/completions"]


def test_kimi_strict_ids_can_be_turned_off(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    body = {"model": "kimi-k2-0905-preview", "messages": kimi_loop("search:0", "search")}
    assert post(client, "kimi", body).status_code == 400
    fake_upstream.kimi.strict_ids = False
    assert post(client, "kimi", body).status_code == 200


# --- validators as plain functions ----------------------------------------------------------------------


def kimi_loop(call_id: str = "functions.read:0", name: str = "read", **assistant: Any) -> list[dict[str, Any]]:
    """A user turn, an assistant tool call, and its result."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"path": "a.txt"}'}}
    return [
        {"role": "user", "content": "read a.txt"},
        {"role": "assistant", "content": None, "tool_calls": [call], **assistant},
        {"role": "tool", "tool_call_id": call_id, "content": "hello"},
    ]


def kimi_two_turns(second_id: str) -> list[dict[str, Any]]:
    second = kimi_loop(second_id)
    return [*kimi_loop(), {"role": "assistant", "content": "again?"}, *second]


@pytest.mark.parametrize(
    "body",
    [
        kimi_body(),
        kimi_body(messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}], temperature=0),
        {"model": "kimi-k2-0905-preview", "messages": kimi_loop(), "tools": [READ_TOOL_KIMI], "tool_choice": "auto"},
        {"model": "kimi-k2-0905-preview", "messages": kimi_two_turns("functions.read:1"), "tool_choice": None},
        {"model": "kimi-k2-thinking", "messages": kimi_loop(reasoning_content="look"), "temperature": 1.0},
        kimi_body(max_tokens=16000, tools=[READ_TOOL_KIMI] * 128, tool_choice="none", stream=True),
    ],
)
def test_kimi_validator_accepts(body: dict[str, Any]) -> None:
    assert validate_kimi_request(body, KIMI_HEADERS) == []


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"messages": [{"role": "user", "content": "hi"}]}, "model is required"),
        (kimi_body(messages=[]), "messages must be a non-empty list"),
        (kimi_body(max_completion_tokens=10), "max_completion_tokens is not supported"),
        (kimi_body(temperature=1.5), "temperature 1.5 is out of range"),
        (kimi_body(tool_choice="required"), "tool_choice 'required' is not supported"),
        (kimi_body(tool_choice={"type": "function", "function": {"name": "read"}}), "is not supported"),
        (kimi_body(tools=[READ_TOOL_KIMI] * 129), "too many tools"),
        (kimi_body(messages=kimi_loop("call_1")), "tool call id 'call_1' is not 'functions.read:<index>'"),
        (kimi_body(messages=kimi_loop("functions.write:0")), "is not 'functions.read:<index>'"),
        (kimi_body(messages=kimi_two_turns("functions.read:0")), "index in 'functions.read:0' is already used"),
        (kimi_body(messages=kimi_loop(content="")), "text content is empty"),
        (kimi_body(messages=[*kimi_loop()[:2], {"role": "tool", "tool_call_id": "functions.read:0"}]), "empty"),
        (kimi_body(messages=[{"role": "bot", "content": "hi"}]), "messages[0]: role must be one of"),
        (
            {"model": "kimi-k2-thinking-turbo", "messages": kimi_loop()},
            "reasoning_content is missing in assistant tool call message at index 1",
        ),
        (
            kimi_body(
                messages=[
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "tool_calls": [{"id": "functions.f:0", "function": {}}]},
                    {"role": "tool", "tool_call_id": "functions.f:0", "content": "r"},
                ]
            ),
            "needs function.name and function.arguments",
        ),
    ],
)
def test_kimi_validator_refuses(body: dict[str, Any], problem: str) -> None:
    problems = validate_kimi_request(body, KIMI_HEADERS)
    assert len(problems) == 1
    assert problem in problems[0]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "sk-test"}, {"Authorization": "Bearer "}])
def test_kimi_validator_refuses_a_missing_bearer_key(headers: dict[str, str]) -> None:
    assert validate_kimi_request(kimi_body(), headers) == [
        "Invalid Authentication: missing 'Authorization: Bearer <key>' header"
    ]
    assert validate_kimi_request(kimi_body()) == []  # no headers given: header checks skipped


def test_kimi_validator_without_strict_ids_still_pairs_results() -> None:
    body = kimi_body(messages=[*kimi_loop("search:0", "search"), *kimi_loop("search:0", "search")[1:]])
    assert validate_kimi_request(body, strict_ids=False) == []
    body["messages"][2]["tool_call_id"] = "search:9"
    assert validate_kimi_request(body, strict_ids=False) == [
        "messages[2]: tool_call_id 'search:9' answers none of the tool_calls of messages[1]",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: search:0",
    ]


def test_kimi_validator_refuses_a_result_for_an_unknown_call() -> None:
    body = kimi_body(messages=[*kimi_loop()[:2], {"role": "tool", "tool_call_id": "x", "content": "r"}])
    problems = validate_kimi_request(body, KIMI_HEADERS)
    assert problems[0] == "messages[2]: tool_call_id 'x' answers none of the tool_calls of messages[1]"
    assert "did not have response messages: functions.read:0" in problems[1]


@pytest.mark.parametrize(
    "model",
    ["kimi-k2.5", "kimi-k2.6", "kimi-k2.7-code", "kimi-k3", "kimi-thinking-preview", "moonshotai/Kimi-K2-Thinking"],
)
def test_kimi_reasoning_models_need_their_reasoning_back(model: str) -> None:
    assert validate_kimi_request({"model": model, "messages": kimi_loop()}) == [
        "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1"
    ]
    assert validate_kimi_request({"model": model, "messages": kimi_loop(reasoning_content="r")}) == []


def test_kimi_refuses_a_user_turn_between_a_call_and_its_result() -> None:
    loop = kimi_loop()
    body = kimi_body(messages=[*loop[:2], {"role": "user", "content": "wait"}, loop[2]])
    problems = validate_kimi_request(body)
    assert problems[0].startswith("An assistant message with 'tool_calls' must be followed by tool messages")
    assert "messages with role 'tool' must be a response to a preceding message with 'tool_calls'" in problems[1]


def use(*ids: str) -> dict[str, Any]:
    blocks = [{"type": "tool_use", "id": i, "name": "read", "input": {"path": "a.txt"}} for i in ids]
    return {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, *blocks]}


def result(*ids: str, text: str | None = None) -> dict[str, Any]:
    blocks = [{"type": "tool_result", "tool_use_id": i, "content": "hello"} for i in ids]
    return {"role": "user", "content": blocks + ([{"type": "text", "text": text}] if text else [])}


def loop_body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    first = {"role": "user", "content": "read a.txt"}
    return anthropic_body(messages=[first, *messages], tools=[READ_TOOL_ANTHROPIC]) | fields


@pytest.mark.parametrize(
    "body",
    [
        anthropic_body(),
        anthropic_body(system="be brief", temperature=1, tool_choice={"type": "auto"}, stream=True),
        loop_body(use("toolu_01"), result("toolu_01")),
        loop_body(use("toolu_01", "toolu_02"), result("toolu_02", "toolu_01", text="and now?")),
        loop_body(use("a"), result("a"), use("b"), result("b"), tool_choice={"type": "tool", "name": "read"}),
        loop_body({"role": "assistant", "content": "Sure."}, {"role": "user", "content": "go"}),
    ],
)
def test_anthropic_validator_accepts(body: dict[str, Any]) -> None:
    assert validate_anthropic_request(body, ANTHROPIC_HEADERS) == []


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}, "model: Field required"),
        (anthropic_body(max_tokens=0), "max_tokens"),
        ({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}, "max_tokens"),
        (anthropic_body(messages=[]), "messages: must be a non-empty list"),
        (anthropic_body(messages=[{"role": "assistant", "content": "hi"}]), "messages.0: roles must alternate"),
        (anthropic_body(messages=[{"role": "user", "content": "a"}] * 2), "messages.1: roles must alternate"),
        (anthropic_body(messages=[{"role": "system", "content": "x"}]), "role 'system' is not allowed"),
        (anthropic_body(temperature=-0.1), "temperature -0.1 is out of range"),
        (anthropic_body(tool_choice="auto"), "tool_choice: must be an object"),
        (anthropic_body(tool_choice={"type": "required"}), "tool_choice: must be an object"),
        (anthropic_body(tool_choice={"type": "tool"}), "tool_choice.name: Field required"),
        (loop_body(use("functions.read:0"), result("functions.read:0")), "String should match pattern"),
        (loop_body(use("a"), result("a"), use("a"), result("a")), "tool_use ids must be unique, 'a' is repeated"),
        (loop_body(use("a"), {"role": "user", "content": "and?"}), "tool_use ids ['a'] have no tool_result"),
        (loop_body(use("a")), "tool_use ids ['a'] have no tool_result after them"),
        (loop_body(use("a"), result("a", "b")), "tool_result 'b' has no tool_use in the previous message"),
        (
            loop_body(use("a"), {"role": "user", "content": [{"type": "text", "text": "x"}, *result("a")["content"]]}),
            "tool_result blocks must come first",
        ),
        (loop_body(use("a"), result("a"), tools=[]), "tools: must be given"),
    ],
)
def test_anthropic_validator_refuses(body: dict[str, Any], problem: str) -> None:
    problems = validate_anthropic_request(body, ANTHROPIC_HEADERS)
    assert len(problems) == 1, problems
    assert problem in problems[0]


def test_anthropic_validator_refuses_a_late_tool_result() -> None:
    body = loop_body(use("a"), {"role": "user", "content": "wait"}, {"role": "assistant", "content": "ok"}, result("a"))
    assert validate_anthropic_request(body) == [
        "messages.2: tool_use ids ['a'] have no tool_result",
        "messages.4: tool_result 'a' has no tool_use in the previous message",
    ]


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"anthropic-version": "2023-06-01"}, "x-api-key header is required"),
        ({"X-Api-Key": "k"}, "anthropic-version: header is required (2023-06-01)"),
        ({"x-api-key": "k", "anthropic-version": "2024-01-01"}, "anthropic-version: header is required (2023-06-01)"),
    ],
)
def test_anthropic_validator_checks_headers(headers: dict[str, str], problem: str) -> None:
    assert validate_anthropic_request(anthropic_body(), headers) == [problem]


# --- guards from conftest -------------------------------------------------------------------------------


def test_tests_cannot_reach_beyond_loopback() -> None:
    with pytest.raises(httpx.ConnectError, match="must not reach beyond loopback"):
        httpx.get("https://api.moonshot.ai/v1/models")
