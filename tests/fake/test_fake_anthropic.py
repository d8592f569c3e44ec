"""The Anthropic wire beyond the basics in test_fake_upstream.py: thinking rules, signed and redacted
thinking coming back unchanged, Kimi's Anthropic endpoint, and the stream round trip."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fake_upstream import (
    FakeUpstream,
    IssuedThinking,
    anthropic_sse_events,
    anthropic_text,
    anthropic_tool_use,
    validate_anthropic_request,
)
from fake_wire import post, read_anthropic_stream, simple_body, sse
from hypothesis import given
from hypothesis import strategies as st

TOOLS = [{"name": "read", "input_schema": {"type": "object"}}]
THINKING = {"type": "enabled", "budget_tokens": 2048}


def turn(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def use(use_id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": "read", "input": {}}


def result(use_id: str = "toolu_1") -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use_id, "content": "x"}]}


def thinking_block(text: str = "hmm", signature: str = "sig") -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": signature}


def body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    first = {"role": "user", "content": "go"}
    return {"model": "claude-sonnet-4-5", "max_tokens": 4096, "tools": TOOLS, "messages": [first, *messages]} | fields


@pytest.mark.parametrize(
    "request_body",
    [
        body(thinking=THINKING),
        body(turn(thinking_block(), use()), result(), thinking=THINKING),
        body(turn({"type": "redacted_thinking", "data": "opaque"}, use()), result(), thinking=THINKING),
        body(
            turn(use()),
            result(),
            turn({"type": "text", "text": "done"}),
            {"role": "user", "content": "more"},
            thinking=THINKING,
        ),
        body(turn({"type": "text", "text": "x"}, use()), result()),  # thinking off: no thinking block needed
        body(thinking={"type": "enabled", "budget_tokens": 1024}, temperature=1, tool_choice={"type": "auto"}),
    ],
)
def test_thinking_rules_accept(request_body: dict[str, Any]) -> None:
    assert validate_anthropic_request(request_body) == []


@pytest.mark.parametrize(
    ("request_body", "problem"),
    [
        (
            body(thinking={"type": "enabled", "budget_tokens": 500}),
            "budget_tokens: Input should be greater than or equal to 1024",
        ),
        (body(max_tokens=2048, thinking=THINKING), "`max_tokens` must be greater than `thinking.budget_tokens`"),
        (body(thinking=THINKING, temperature=0.5), "`temperature` may only be set to 1 when thinking is enabled"),
        (
            body(thinking=THINKING, tool_choice={"type": "any"}),
            "Thinking may not be enabled when tool_choice forces tool use",
        ),
        (
            body(turn({"type": "text", "text": "x"}, use()), result(), thinking=THINKING),
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`",
        ),
        (
            body(turn(use()), result(), thinking={"type": "adaptive"}),
            "a final `assistant` message must start with a thinking",
        ),
    ],
)
def test_thinking_rules_refuse(request_body: dict[str, Any], problem: str) -> None:
    problems = validate_anthropic_request(request_body)
    assert len(problems) == 1, problems
    assert problem in problems[0]


def test_signed_thinking_must_come_back_as_issued() -> None:
    issued = IssuedThinking({"sig-1": "hmm"}, {"opaque"})
    unchanged = body(
        turn(thinking_block("hmm", "sig-1"), {"type": "redacted_thinking", "data": "opaque"}, use()), result()
    )
    assert validate_anthropic_request(unchanged, issued=issued) == []
    for bad_block, problem in [
        (thinking_block("hmm, edited", "sig-1"), "messages.1.content.0: Invalid `signature` in `thinking` block"),
        (thinking_block("hmm", "sig-invented"), "messages.1.content.0: Invalid `signature` in `thinking` block"),
        ({"type": "thinking", "thinking": "hmm"}, "messages.1.content.0.thinking.signature: Field required"),
        (
            {"type": "redacted_thinking", "data": "other"},
            "messages.1.content.0: Invalid `data` in `redacted_thinking` block",
        ),
    ]:
        assert validate_anthropic_request(body(turn(bad_block, use()), result()), issued=issued) == [problem]
    assert validate_anthropic_request(body(turn(thinking_block("x", "sig-invented"), use()), result())) == []


@pytest.mark.parametrize("route", ["anthropic", "kimi-anthropic"])
def test_the_route_remembers_the_thinking_it_issued(
    fake_upstream: FakeUpstream, client: httpx.Client, route: str
) -> None:
    fake_upstream.route(route).enqueue(
        anthropic_tool_use([("toolu_1", "read", {})], thinking="I should read.", redacted_thinking="opaque-1")
    )
    answer = post(client, fake_upstream, route, body(thinking=THINKING)).json()
    replay = body(turn(*answer["content"]), result(), thinking=THINKING)
    assert post(client, fake_upstream, route, replay).status_code == 200

    answer["content"][0]["thinking"] = "I should read (edited)."
    refused = post(client, fake_upstream, route, body(turn(*answer["content"]), result(), thinking=THINKING))
    assert refused.status_code == 400
    assert refused.json()["error"] == {
        "type": "invalid_request_error",
        "message": "messages.1.content.0: Invalid `signature` in `thinking` block",
    }
    without = post(client, fake_upstream, route, body(turn(*answer["content"][2:]), result(), thinking=THINKING))
    assert "must start with a thinking block" in without.json()["error"]["message"]


def test_thinking_issued_while_streaming_is_remembered_too(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.anthropic.enqueue(anthropic_tool_use([("toolu_1", "read", {})], thinking="Plan."))
    events = sse(client, fake_upstream, "anthropic", body(thinking=THINKING, stream=True))
    message = read_anthropic_stream((e.event, e.data) for e in events)
    assert (
        post(
            client, fake_upstream, "anthropic", body(turn(*message["content"]), result(), thinking=THINKING)
        ).status_code
        == 200
    )
    assert fake_upstream.violations == []


def test_kimi_anthropic_streams_tool_input_whole_on_request() -> None:
    reply = anthropic_tool_use([("toolu_1", "read", {"path": "a"})], text="Reading.")
    events = anthropic_sse_events(reply.body, whole_tool_input=True)
    starts = [json.loads(d)["content_block"] for n, d in events if n == "content_block_start"]
    assert starts[1] == {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}}
    deltas = [json.loads(d)["delta"]["type"] for n, d in events if n == "content_block_delta"]
    assert "input_json_delta" not in deltas
    assert read_anthropic_stream(events)["content"] == reply.body["content"]


def test_redacted_thinking_arrives_whole_at_block_start(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("kimi-anthropic").enqueue(anthropic_text("Hi.", thinking="t", redacted_thinking="opaque"))
    events = sse(client, fake_upstream, "kimi-anthropic", simple_body("kimi-anthropic", stream=True))
    starts = [e.json()["content_block"] for e in events if e.event == "content_block_start"]
    assert starts[1] == {"type": "redacted_thinking", "data": "opaque"}


@given(
    text=st.one_of(st.none(), st.text(min_size=1, max_size=30)),
    thinking=st.one_of(st.none(), st.text(max_size=30)),
    redacted=st.one_of(st.none(), st.text(min_size=1, max_size=10)),
    uses=st.lists(
        st.tuples(
            st.from_regex(r"[a-z0-9_]{1,8}", fullmatch=True), st.dictionaries(st.text(max_size=4), st.integers())
        ),
        max_size=3,
    ),
    whole=st.booleans(),
)
def test_any_anthropic_body_streams_back_to_itself(
    text: str | None, thinking: str | None, redacted: str | None, uses: list[tuple[str, dict[str, int]]], whole: bool
) -> None:
    blocks = [(f"toolu_{n}_{i}", "read", inp) for n, (i, inp) in enumerate(uses)]
    reply = anthropic_tool_use(blocks, text=text, thinking=thinking, redacted_thinking=redacted)
    rebuilt = read_anthropic_stream(anthropic_sse_events(reply.body, whole_tool_input=whole))
    assert rebuilt["content"] == reply.body["content"]
    assert (rebuilt["stop_reason"], rebuilt["usage"]) == ("tool_use", {"input_tokens": 20, "output_tokens": 10})
