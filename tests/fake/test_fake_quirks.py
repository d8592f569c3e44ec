"""The quirk fixtures of PROVIDER-FACTS §8.4 that live on the wire, each written with the fake's public
builders and read back over a real socket: the recipes other tests copy."""

from __future__ import annotations

import json
from typing import Any

import httpx
from fake_upstream import (
    FakeUpstream,
    error,
    gemini_sse_events,
    gemini_text,
    ollama_ndjson_lines,
    ollama_text,
    openai_error_event,
    openai_sse_events,
    openai_text,
    openai_tool_calls,
    raw_body,
    raw_ndjson,
    raw_stream,
)
from fake_wire import chat_url, headers_for, post, read_gemini_stream, read_openai_stream, simple_body, sse

TOOL_CALL = openai_tool_calls([("call_1", "read", '{"path": "a"}')], text="Reading.")


def chunks(events: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in events if e.data != "[DONE]"]


def tool_parts(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for c in payloads for choice in c.get("choices") or [] for p in choice["delta"].get("tool_calls", [])]


def test_q_usage_null_choices(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    events = openai_sse_events(openai_text("hi").body)
    tail = json.loads(events[-2]) | {"choices": None}
    fake_upstream.route("vllm").enqueue(raw_stream([*events[:-2], json.dumps(tail), "[DONE]"]))
    received = chunks(sse(client, fake_upstream, "vllm", simple_body("vllm", stream=True)))
    assert received[-1]["choices"] is None and received[-1]["usage"]["total_tokens"] == 30


def test_q_no_index_and_q_sparse_index(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    events = openai_sse_events(TOOL_CALL.body)
    without_index = [
        e.replace('"index": 0, "type"', '"type"').replace('{"index": 0, "function"', '{"function"') for e in events
    ]
    sparse = [e.replace('"tool_calls": [{"index": 0', '"tool_calls": [{"index": 1') for e in events]
    fake_upstream.route("custom").enqueue(raw_stream(without_index), raw_stream(sparse))
    assert all(
        "index" not in p for p in tool_parts(chunks(sse(client, fake_upstream, "custom", simple_body("custom"))))
    )
    assert {p["index"] for p in tool_parts(chunks(sse(client, fake_upstream, "custom", simple_body("custom"))))} == {1}


def test_q_missing_stream_id_and_q_whole_call_chunk(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("vllm").enqueue(openai_tool_calls([(None, "read", "{}")]))
    parts = tool_parts(chunks(sse(client, fake_upstream, "vllm", simple_body("vllm", stream=True))))
    assert parts[0] == {"index": 0, "type": "function", "function": {"name": "read", "arguments": ""}}
    whole = [json.loads(e) for e in openai_sse_events(TOOL_CALL.body, whole_tool_calls=True)[:-1]]
    assert tool_parts(whole) == [
        {"index": 0, "type": "function", "id": "call_1", "function": {"name": "read", "arguments": '{"path": "a"}'}}
    ]


def test_q_mistral_literal_null_id(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("mistral").enqueue(openai_tool_calls([("null", "read", "{}")]))
    parts = tool_parts(chunks(sse(client, fake_upstream, "mistral", simple_body("mistral", stream=True))))
    assert parts[0]["id"] == "null"


def test_q_gemini_usage_missing_on_one_event(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    body = gemini_text("a longer answer").body
    events = [json.loads(e) for e in gemini_sse_events(body)]
    del events[1]["usageMetadata"]
    fake_upstream.gemini.enqueue(raw_stream(json.dumps(e) for e in events))
    read = read_gemini_stream(e.data for e in sse(client, fake_upstream, "gemini", simple_body("gemini")))
    assert read["usage"] == body["usageMetadata"]


def test_q_gemini_bad_key_is_a_400_with_error_info(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
    }
    fake_upstream.gemini.enqueue(
        error(400, message="API key not valid. Please pass a valid API key.", extra={"details": [info]})
    )
    refused = post(client, fake_upstream, "gemini", simple_body("gemini")).json()["error"]
    assert (refused["status"], refused["details"][0]["reason"]) == ("INVALID_ARGUMENT", "API_KEY_INVALID")


def test_q_ollama_ndjson_error_after_a_200(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    lines = ollama_ndjson_lines(ollama_text("partial answer").body)
    fake_upstream.ollama.enqueue(
        raw_ndjson([*lines[:2], {"error": "an error was encountered while running the model"}])
    )
    with client.stream("POST", chat_url(fake_upstream, "ollama"), json=simple_body("ollama")) as response:
        received = [json.loads(line) for line in response.iter_lines() if line]
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-ndjson"
    assert received[-1] == {"error": "an error was encountered while running the model"}
    assert "".join(r.get("message", {}).get("content", "") for r in received) == "".join(
        line["message"]["content"] for line in lines[:2]
    )


def test_q_openrouter_comments_and_midstream_error(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    events = openai_sse_events(openai_text("the start of a long answer").body)
    midstream = openai_error_event("Provider disconnected", code=502, finish_reason="error")
    fake_upstream.route("openrouter").enqueue(raw_stream([b": OPENROUTER PROCESSING\n\n", *events[:3], midstream]))
    url = chat_url(fake_upstream, "openrouter")
    with client.stream(
        "POST", url, json=simple_body("openrouter", stream=True), headers=headers_for("openrouter")
    ) as r:
        lines = [line for line in r.iter_lines() if line]
    assert lines[0] == ": OPENROUTER PROCESSING"
    last = json.loads(lines[-1].removeprefix("data: "))
    assert last["error"] == {"message": "Provider disconnected", "code": 502}
    assert last["choices"][0]["finish_reason"] == "error"


def test_q_openrouter_raw_provider_error(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    inner = {
        "error": {
            "message": "thinking is enabled but reasoning_content is missing in assistant tool call message at index 3"
        }
    }
    metadata = {"raw": json.dumps(inner), "provider_name": "Moonshot AI"}
    fake_upstream.route("openrouter").enqueue(
        error(400, message="Provider returned error", extra={"metadata": metadata})
    )
    refused = post(client, fake_upstream, "openrouter", simple_body("openrouter")).json()["error"]
    assert refused["code"] == 400 and json.loads(refused["metadata"]["raw"]) == inner


def test_q_openrouter_null_choices(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("openrouter").enqueue(raw_body(200, json.dumps({"id": "gen-1", "choices": None}).encode()))
    assert post(client, fake_upstream, "openrouter", simple_body("openrouter")).json() == {
        "id": "gen-1",
        "choices": None,
    }


def test_q_groq_sse_error_event(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    failure = {"error": {"message": "Failed to call a function.", "type": "invalid_request_error",
                         "code": "tool_use_failed", "failed_generation": "<x>", "status_code": 400}}  # fmt: skip
    events = openai_sse_events(openai_text("hi").body)
    fake_upstream.route("groq").enqueue(raw_stream([*events[:2], ("error", json.dumps(failure))]))
    received = sse(client, fake_upstream, "groq", simple_body("groq", stream=True))
    assert (received[-1].event, received[-1].json()) == ("error", failure)


def test_streams_under_the_wrong_content_type(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    events = openai_sse_events(TOOL_CALL.body)
    fake_upstream.route("custom").enqueue(
        raw_ndjson(json.loads(e) for e in events[:-1]),  # OpenAI chunks as NDJSON lines
        raw_stream(events, content_type="application/json"),  # `data:` lines labelled JSON
    )
    url = chat_url(fake_upstream, "custom")
    as_ndjson = client.post(url, json=simple_body("custom", stream=True))
    assert as_ndjson.headers["content-type"] == "application/x-ndjson"
    assert read_openai_stream([*as_ndjson.text.splitlines(), "[DONE]"])["calls"][0]["arguments"] == '{"path": "a"}'
    labelled_json = client.post(url, json=simple_body("custom", stream=True))
    assert labelled_json.headers["content-type"] == "application/json"
    assert labelled_json.text.startswith("data: {")
