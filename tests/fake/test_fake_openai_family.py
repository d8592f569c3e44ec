"""The OpenAI-wire hosts: shared and per-host request rules, Kimi family rules on the hosts serving Kimi,
and the stream each host generates from a body."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fake_upstream import (
    OPENAI_HOSTS,
    FakeUpstream,
    is_kimi_model,
    is_kimi_thinking_model,
    k2_call_id,
    mistral_call_id,
    mistral_text,
    mistral_tool_calls,
    openai_call_id,
    openai_model_family,
    openai_sse_events,
    openai_text,
    openai_tool_calls,
    tool_pairing_problems,
    validate_openai_request,
)
from fake_wire import post, read_openai_stream, simple_body, sse
from hypothesis import given
from hypothesis import strategies as st

HOSTS = tuple(OPENAI_HOSTS)


def call(call_id: str, name: str = "read", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(*ids: str, **fields: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids], **fields}


def tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


USER = {"role": "user", "content": "go"}


def body(model: str, *messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"model": model, "messages": [USER, *messages], **fields}


# --- the shared pairing rule -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "messages",
    [
        [USER],
        [USER, assistant("a", "b"), tool("b"), tool("a"), {"role": "assistant", "content": "done"}, USER],
        [USER, assistant("a"), tool("a"), assistant("b"), tool("b")],
    ],
)
def test_pairing_accepts_contiguous_answers_in_any_order(messages: list[dict[str, Any]]) -> None:
    assert tool_pairing_problems(messages) == []


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        (
            [USER, assistant("c1", "c2"), tool("c1"), USER, tool("c2")],  # Q-openai-tool-order
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            "'tool_call_id'. The following tool_call_ids did not have response messages: c2",
        ),
        ([USER, assistant("c1")], "did not have response messages: c1"),
        ([USER, tool("c1")], "messages[1]: messages with role 'tool' must be a response to a preceding message"),
        (
            [USER, assistant("c1"), tool("zz")],
            "messages[2]: tool_call_id 'zz' answers none of the tool_calls of messages[1]",
        ),
    ],
)
def test_pairing_refuses_what_openai_refuses(messages: list[dict[str, Any]], problem: str) -> None:
    problems = tool_pairing_problems(messages)
    assert problem in problems[0]
    assert problems[0].status == 400


@pytest.mark.parametrize("host", HOSTS)
def test_every_host_applies_the_pairing_rule(host: str) -> None:
    ids = ("functions.read:0", "functions.read:1") if host == "kimi" else (mistral_call_id(), mistral_call_id())
    messages = [assistant(*ids), tool(ids[0]), USER, tool(ids[1])]
    problems = validate_openai_request(body("some/model", *messages), host=host)
    assert any("did not have response messages" in p for p in problems)


# --- OpenAI ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "sampling"),
    [
        ("gpt-4.1", "plain"),
        ("gpt-5-chat-latest", "plain"),
        ("o3", "never"),
        ("o4-mini", "never"),
        ("gpt-5", "never"),
        ("gpt-5-mini-2025-08-07", "never"),
        ("gpt-5.3-chat-latest", "never"),
        ("gpt-5.1-codex-max", "never"),
        ("gpt-5.4-pro", "never"),
        ("gpt-5.4-mini", "unless_effort_raised"),
        ("gpt-5.1", "unless_effort_raised"),
        ("gpt-5.5", "with_effort_none"),
        ("gpt-5.6-sol", "with_effort_none"),
    ],
)
def test_openai_model_families(model: str, sampling: str) -> None:
    assert openai_model_family(model).sampling == sampling


@pytest.mark.parametrize(
    ("fields", "ok"),
    [
        ({"model": "gpt-4.1", "max_tokens": 10, "temperature": 0.2}, True),
        ({"model": "o3", "max_completion_tokens": 10, "temperature": 1}, True),
        ({"model": "gpt-5.4-mini", "temperature": 0.2}, True),
        ({"model": "gpt-5.4-mini", "temperature": 0.2, "reasoning_effort": "none"}, True),
        ({"model": "gpt-5.4-mini", "temperature": 0.2, "reasoning_effort": "low"}, False),
        ({"model": "gpt-5.5", "temperature": 0.2}, False),
        ({"model": "gpt-5.5", "temperature": 0.2, "reasoning_effort": "none"}, True),
        ({"model": "o4-mini", "temperature": 0.6}, False),
        ({"model": "gpt-4.1", "temperature": 2.5}, False),
        ({"model": "gpt-4.1", "stream": True, "stream_options": {"include_usage": True}}, True),
    ],
)
def test_openai_sampling_rules(fields: dict[str, Any], ok: bool) -> None:
    problems = validate_openai_request({"messages": [USER], **fields})
    assert (problems == []) is ok, problems


@pytest.mark.parametrize("model", ["o3", "o1-mini", "gpt-5", "gpt-5.4-mini", "gpt-5.5"])
def test_openai_reasoning_models_refuse_max_tokens(
    fake_upstream: FakeUpstream, client: httpx.Client, model: str
) -> None:
    response = post(client, fake_upstream, "openai", body(model, max_tokens=100))
    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }
    assert post(client, fake_upstream, "openai", body(model, max_completion_tokens=100)).status_code == 200


def test_openai_refuses_temperature_on_a_reasoning_model(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    error = post(client, fake_upstream, "openai", body("o3", temperature=0.6)).json()["error"]
    assert (error["param"], error["code"]) == ("temperature", "unsupported_value")
    assert "does not support 0.6 with this model. Only the default (1) value is supported." in error["message"]


@pytest.mark.parametrize(
    ("call_id", "problem"),
    [
        ("c" * 41, "string too long. Expected a string with maximum length 40, but got a string with length 41"),
        ("toolu_01:x", "must contain only letters, digits, '_' and '-'"),
        ("functions.read:0", "must contain only letters"),
    ],
)
def test_openai_refuses_foreign_tool_call_ids(call_id: str, problem: str) -> None:
    problems = validate_openai_request(body("gpt-4.1", assistant(call_id), tool(call_id)))
    assert len(problems) == 1
    assert problem in problems[0]
    assert problems[0].param == "messages[1].tool_calls[0].id"


@given(st.text(alphabet="abcXYZ019_-", min_size=1, max_size=40))
def test_openai_accepts_any_id_of_its_charset_up_to_40(call_id: str) -> None:
    assert validate_openai_request(body("gpt-4.1", assistant(call_id), tool(call_id))) == []


def test_issued_ids_satisfy_their_services() -> None:
    openai_id, mistral_id = openai_call_id(), mistral_call_id()
    assert openai_id.startswith("call_") and len(openai_id) == 29
    assert validate_openai_request(body("gpt-4.1", assistant(openai_id), tool(openai_id))) == []
    assert (
        validate_openai_request(body("mistral-small-latest", assistant(mistral_id), tool(mistral_id)), host="mistral")
        == []
    )
    assert openai_call_id() != openai_id and k2_call_id("read", 3) == "functions.read:3"


# --- Mistral ---------------------------------------------------------------------------------------------


MISTRAL_ID = "abcDEF123"


@pytest.mark.parametrize(
    ("fields", "messages", "status", "problem"),
    [
        ({"stream_options": {"include_usage": True}}, [], 422, "body.stream_options: Extra inputs are not permitted"),
        ({"max_completion_tokens": 5}, [], 422, "body.max_completion_tokens: Extra inputs"),
        (
            {},
            [assistant(MISTRAL_ID, reasoning_content="r"), tool(MISTRAL_ID)],
            422,
            "assistant.reasoning_content: Extra",
        ),
        ({}, [{"role": "user", "content": "x", "name": "bob"}], 422, "body.messages.1.user.name: Extra inputs"),
        ({"tool_choice": "auto_please"}, [], 422, "tool_choice: Input should be"),
        ({}, [{"role": "developer", "content": "x"}], 422, "messages.1.role: Input should be 'system', 'user'"),
        ({}, [assistant("call_abc123456"), tool("call_abc123456")], 400, "Tool call id was call_abc123456 but must be"),
        ({}, [assistant(MISTRAL_ID), tool(MISTRAL_ID), USER], 400, "Unexpected role 'user' after role 'tool'"),
        ({}, [{"role": "assistant", "content": "hi"}], 400, "Expected last role User or Tool"),
    ],
)
def test_mistral_refuses(
    fake_upstream: FakeUpstream,
    client: httpx.Client,
    fields: dict[str, Any],
    messages: list[dict[str, Any]],
    status: int,
    problem: str,
) -> None:
    response = post(client, fake_upstream, "mistral", body("mistral-small-latest", *messages, **fields))
    assert response.status_code == status
    assert response.json()["object"] == "error"
    assert problem in fake_upstream.violations[0]


def test_mistral_error_bodies_carry_the_service_codes(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    bad_id = post(client, fake_upstream, "mistral", body("m", assistant("call_1"), tool("call_1"))).json()
    assert (bad_id["type"], bad_id["code"]) == ("invalid_function_call", "3280")
    order = post(client, fake_upstream, "mistral", body("m", assistant(MISTRAL_ID), tool(MISTRAL_ID), USER)).json()
    assert order == {
        "object": "error",
        "message": "Unexpected role 'user' after role 'tool'",
        "type": "invalid_request_message_order",
        "param": None,
        "code": "3230",
    }
    extra = post(client, fake_upstream, "mistral", body("m", stream_options={})).json()
    assert extra["message"]["detail"][0] == {
        "type": "extra_forbidden",
        "loc": ["body", "stream_options"],
        "msg": "Extra inputs are not permitted",
        "input": {},
    }


@pytest.mark.parametrize(
    "messages_and_fields",
    [
        ([assistant(MISTRAL_ID), tool(MISTRAL_ID)], {"tool_choice": "any", "random_seed": 1, "max_tokens": 9}),
        ([assistant(MISTRAL_ID), tool(MISTRAL_ID), {"role": "assistant", "content": "ok"}, USER], {}),
        (
            [{"role": "assistant", "content": "Sure,", "prefix": True}],
            {"tool_choice": {"type": "function", "function": {"name": "read"}}},
        ),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": MISTRAL_ID, "type": "function", "function": {"name": "r", "arguments": {"a": 1}}}
                    ],
                },
                {"role": "tool", "tool_call_id": MISTRAL_ID, "name": "r", "content": "x"},
            ],
            {"tool_choice": "required", "stream": True},
        ),
    ],
)
def test_mistral_accepts(messages_and_fields: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    messages, fields = messages_and_fields
    assert validate_openai_request(body("mistral-small-latest", *messages, **fields), host="mistral") == []


# --- OpenRouter and Fireworks ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "fields", "ok"),
    [
        ("openai/gpt-5.5", {"max_tokens": 10}, True),
        ("moonshotai/kimi-k2:free", {}, True),
        ("~moonshotai/kimi-latest", {}, True),
        ("openai/gpt-5.5", {"max_completion_tokens": 10}, False),
        ("gpt-5.5", {}, False),
    ],
)
def test_openrouter_rules(model: str, fields: dict[str, Any], ok: bool) -> None:
    problems = validate_openai_request(body(model, **fields), host="openrouter")
    assert (problems == []) is ok, problems


def test_fireworks_refuses_large_unstreamed_requests(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    model = "accounts/fireworks/models/kimi-k2p6"
    refused = post(client, fake_upstream, "fireworks", body(model, max_tokens=8192)).json()
    assert refused["error"]["code"] == "BAD_REQUEST"
    assert refused["error"]["message"] == "Requests with max_tokens > 4096 must have stream=true"
    assert post(client, fake_upstream, "fireworks", body(model, max_tokens=8192, stream=True)).status_code == 200
    assert post(client, fake_upstream, "fireworks", body(model, max_tokens=4096)).status_code == 200


# --- Kimi on every host that serves it -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "kimi", "thinking"),
    [
        ("kimi-k2-0905-preview", True, False),
        ("moonshotai/Kimi-K2-Instruct-0905", True, False),
        ("accounts/fireworks/models/kimi-k2p6", True, True),
        ("Pro/moonshotai/Kimi-K2.5", True, True),
        ("~moonshotai/kimi-latest", True, False),
        ("moonshot.kimi-k2-thinking", True, True),
        ("kimi-k2.5:cloud", True, True),
        ("kimi-k2-5", True, True),
        ("kimi-k3", True, True),
        ("kimi-thinking-preview", True, True),
        ("gpt-5.5", False, False),
        ("deepseek-reasoner", False, False),
    ],
)
def test_kimi_model_recognition(model: str, kimi: bool, thinking: bool) -> None:
    assert (is_kimi_model(model), is_kimi_thinking_model(model)) == (kimi, thinking)


KIMI_ON_HOST = {
    "openrouter": "moonshotai/kimi-k2.6",
    "groq": "moonshotai/kimi-k2-instruct-0905",
    "together": "moonshotai/Kimi-K2.6",
    "fireworks": "accounts/fireworks/models/kimi-k2p6",
    "siliconflow": "moonshotai/Kimi-K2.6",
    "vllm": "moonshotai/Kimi-K2-Thinking",
    "custom": "kimi-k2.6",
}
REPLAY_FIELD = {host: OPENAI_HOSTS[host].reasoning_fields[0] for host in KIMI_ON_HOST}


@pytest.mark.parametrize("host", sorted(KIMI_ON_HOST))
def test_hosts_serving_kimi_want_k2_ids(host: str) -> None:
    model = KIMI_ON_HOST[host]
    good = body(model, assistant("functions.read:0", reasoning="r", reasoning_content="r"), tool("functions.read:0"))
    assert validate_openai_request(good, host=host) == []
    bad = body(model, assistant("call_1", reasoning="r", reasoning_content="r"), tool("call_1"))
    assert validate_openai_request(bad, host=host) == [
        "messages[1]: tool call id 'call_1' is not 'functions.read:<index>'"
    ]
    assert validate_openai_request(bad, host=host, strict_ids=False) == []
    assert validate_openai_request(body("other/model", assistant("call_1"), tool("call_1")), host=host) == []


@pytest.mark.parametrize("host", sorted(k for k in KIMI_ON_HOST if k != "groq"))
def test_hosts_serving_kimi_thinking_want_reasoning_back_in_their_field(host: str) -> None:
    model, field = KIMI_ON_HOST[host], REPLAY_FIELD[host]
    assert is_kimi_thinking_model(model)
    replayed = body(model, assistant("functions.read:0", **{field: "I read it."}), tool("functions.read:0"))
    assert validate_openai_request(replayed, host=host) == []
    missing = body(model, assistant("functions.read:0"), tool("functions.read:0"))
    assert validate_openai_request(missing, host=host) == [
        "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1"
    ]
    if host != "custom":  # the generic box takes either field
        other = "reasoning_content" if field == "reasoning" else "reasoning"
        wrong = body(model, assistant("functions.read:0", **{other: "x"}), tool("functions.read:0"))
        assert len(validate_openai_request(wrong, host=host)) == 1


def test_openrouter_accepts_reasoning_details_as_the_replay(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    details = [{"type": "reasoning.text", "text": "hm", "format": "unknown", "index": 0}]
    replay = body(
        "moonshotai/kimi-k2.6", assistant("functions.read:0", reasoning_details=details), tool("functions.read:0")
    )
    assert post(client, fake_upstream, "openrouter", replay).status_code == 200
    missing = body("moonshotai/kimi-k2.6", assistant("functions.read:0"), tool("functions.read:0"))
    refused = post(client, fake_upstream, "openrouter", missing)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == 400
    assert "reasoning_content is missing" in refused.json()["error"]["message"]


def test_a_route_can_stop_requiring_k2_ids(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    request = body("moonshotai/kimi-k2-instruct-0905", assistant("call_1"), tool("call_1"))
    assert post(client, fake_upstream, "groq", request).status_code == 400
    fake_upstream.route("groq").strict_ids = False  # type: ignore[attr-defined]
    assert post(client, fake_upstream, "groq", request).status_code == 200


def test_hosts_not_serving_kimi_do_not_apply_its_rules() -> None:
    for host in ("openai", "deepseek", "lmstudio"):
        messages = [assistant("call_1"), tool("call_1")]
        assert validate_openai_request(body("kimi-k2.6", *messages), host=host) == []


# --- streams ---------------------------------------------------------------------------------------------


REPLY = openai_tool_calls(
    [("call_A", "read", '{"path": "a.txt"}'), ("call_B", "mcp.fs-list", "{}")],
    text="Let me look.",
    reasoning="I need the file.",
    reasoning_field="reasoning",
)


def read_back(events: list[Any]) -> dict[str, Any]:
    return read_openai_stream([e.data for e in events])


def test_openai_sends_usage_only_when_asked(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("openai").enqueue(REPLY, REPLY)
    plain = sse(client, fake_upstream, "openai", body("gpt-4.1", stream=True))
    assert read_back(plain)["usage"] is None
    asked = sse(client, fake_upstream, "openai", body("gpt-4.1", stream=True, stream_options={"include_usage": True}))
    tail = json.loads(asked[-2].data)
    assert (tail["choices"], tail["usage"]) == ([], REPLY.body["usage"])
    assert json.loads(asked[-3].data)["choices"][0]["finish_reason"] == "tool_calls"
    read = read_back(asked)
    assert read["content"] == "Let me look."
    assert read["reasoning"] == {"reasoning": "I need the file."}
    assert read["calls"] == [
        {"id": "call_A", "name": "read", "arguments": '{"path": "a.txt"}'},
        {"id": "call_B", "name": "mcp.fs-list", "arguments": "{}"},
    ]


@pytest.mark.parametrize("host", ["kimi", "openrouter"])
def test_some_hosts_always_send_the_usage_tail(fake_upstream: FakeUpstream, client: httpx.Client, host: str) -> None:
    events = sse(client, fake_upstream, host, simple_body(host, stream=True))
    assert json.loads(events[-2].data)["choices"] == []
    assert read_back(events)["usage"]["prompt_tokens"] > 0


def test_openrouter_keeps_a_held_stream_alive_with_comments(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("openrouter").enqueue(openai_text("late", hold_open_s=0.2))
    url = fake_upstream.base_url("openrouter") + "/chat/completions"
    with client.stream(
        "POST", url, json=simple_body("openrouter", stream=True), headers={"Authorization": "Bearer k"}
    ) as r:
        lines = list(r.iter_lines())
    assert lines[0] == ": OPENROUTER PROCESSING"
    assert lines[-2:] == ["data: [DONE]", ""]


def test_mistral_sends_whole_calls_and_usage_on_the_finish_chunk(
    fake_upstream: FakeUpstream, client: httpx.Client
) -> None:
    ids = (mistral_call_id(), mistral_call_id())
    reply = mistral_tool_calls([(ids[0], "read", '{"p": 1}'), (ids[1], "list", "{}")], thinking="Two calls.")
    fake_upstream.route("mistral").enqueue(reply)
    events = sse(client, fake_upstream, "mistral", body("mistral-small-latest", stream=True))
    chunks = [json.loads(e.data) for e in events[:-1]]
    call_chunks = [
        c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if "tool_calls" in c["choices"][0]["delta"]
    ]
    assert call_chunks == [
        {"index": 0, "type": "function", "id": ids[0], "function": {"name": "read", "arguments": '{"p": 1}'}},
        {"index": 1, "type": "function", "id": ids[1], "function": {"name": "list", "arguments": "{}"}},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"] == reply.body["usage"]
    assert read_back(events)["thinking"] == "Two calls."


def test_mistral_thinking_streams_as_chunk_lists_then_text() -> None:
    reply = mistral_text("The answer.", thinking="Let me think.")
    assert reply.body["choices"][0]["message"]["content"] == [
        {"type": "thinking", "thinking": [{"type": "text", "text": "Let me think."}]},
        {"type": "text", "text": "The answer."},
    ]
    deltas = [json.loads(e)["choices"][0]["delta"].get("content") for e in openai_sse_events(reply.body)[1:-3]]
    lists = [d for d in deltas if isinstance(d, list)]
    assert lists and deltas[: len(lists)] == lists  # thinking first, then plain strings
    assert all(isinstance(d, str) for d in deltas[len(lists) :])


def test_groq_puts_usage_under_x_groq(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    events = sse(client, fake_upstream, "groq", body("llama-3.3-70b-versatile", stream=True))
    finish = json.loads(events[-2].data)
    assert finish["choices"][0]["finish_reason"] == "stop"
    assert finish["x_groq"]["usage"]["completion_tokens"] == 2
    asked = sse(
        client,
        fake_upstream,
        "groq",
        body("llama-3.3-70b-versatile", stream=True, stream_options={"include_usage": True}),
    )
    assert json.loads(asked[-2].data)["choices"] == []


def test_lm_studio_repeats_an_empty_name_on_continuations(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("lmstudio").enqueue(openai_tool_calls([("c1", "read", '{"path": "a.txt"}')]))
    events = sse(client, fake_upstream, "lmstudio", body("qwen/qwen3-coder-30b", stream=True))
    parts = [p for e in events[:-1] for c in json.loads(e.data)["choices"] for p in c["delta"].get("tool_calls", [])]
    assert parts[0]["function"]["name"] == "read"
    assert {p["function"]["name"] for p in parts[1:]} == {""}
    assert read_back(events)["calls"][0]["name"] == "read"


calls_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.text(alphabet="abc123", min_size=1, max_size=8)),
        st.text(alphabet="abcdef._-", min_size=1, max_size=12),
        st.dictionaries(st.text(max_size=5), st.integers()).map(json.dumps),
    ),
    max_size=3,
)


@given(
    text=st.text(max_size=40),
    reasoning=st.one_of(st.none(), st.text(min_size=1, max_size=40)),
    field=st.sampled_from(["reasoning_content", "reasoning"]),
    calls=calls_strategy,
    options=st.fixed_dictionaries(
        {
            "usage_tail": st.booleans(),
            "finish_usage": st.sampled_from([None, "usage", "x_groq"]),
            "whole_tool_calls": st.booleans(),
            "continuation_name": st.sampled_from([None, ""]),
        }
    ),
)
def test_any_openai_body_streams_back_to_itself(
    text: str, reasoning: str | None, field: str, calls: list[tuple[str | None, str, str]], options: dict[str, Any]
) -> None:
    reply = openai_tool_calls(calls, text=text, reasoning=reasoning, reasoning_field=field) if calls else None
    reply = reply or openai_text(text, reasoning=reasoning, reasoning_field=field)
    read = read_openai_stream(openai_sse_events(reply.body, **options))
    message = reply.body["choices"][0]["message"]
    assert read["content"] == (message["content"] or "")
    assert read["reasoning"] == ({field: reasoning} if reasoning else {})
    assert read["calls"] == [{"id": i, "name": n, "arguments": a} for i, n, a in calls]
    assert read["finish"] == reply.body["choices"][0]["finish_reason"]
    has_usage = options["usage_tail"] or options["finish_usage"] is not None
    assert read["usage"] == (reply.body["usage"] if has_usage else None)
