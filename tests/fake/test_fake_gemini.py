"""The Gemini wire: contents and function-calling rules, Gemini 3 signatures and IDs issued by the fake,
tool config, the SSE stream (cumulative usage, no terminator) and the JSON array without alt=sse."""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest
from fake_upstream import (
    SKIP_SIGNATURE,
    FakeUpstream,
    IssuedParts,
    gemini_sse_events,
    gemini_text,
    gemini_tool_calls,
    message,
    validate_gemini_request,
)
from fake_wire import chat_url, headers_for, post, read_gemini_stream, sse
from hypothesis import given
from hypothesis import strategies as st

USER = {"role": "user", "parts": [{"text": "go"}]}
G3, G2 = "gemini-3.5-flash", "gemini-2.5-flash"


def call(name: str = "read", call_id: str | None = None, signature: str | None = None, **args: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": args, **({"id": call_id} if call_id else {})}}
    return part | ({"thoughtSignature": signature} if signature else {})


def response(name: str = "read", call_id: str | None = None, value: Any = None) -> dict[str, Any]:
    answer = {"output": "ok"} if value is None else value
    return {"functionResponse": {"name": name, "response": answer, **({"id": call_id} if call_id else {})}}


def model(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": list(parts)}


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "parts": list(parts)}


def body(*contents: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"contents": [USER, *contents], **fields}


@pytest.mark.parametrize(
    ("request_body", "model_name"),
    [
        (body(), G3),
        (body(model(call(signature=SKIP_SIGNATURE)), user(response())), G3),
        (
            body(model(call("a", signature="s"), call("b")), user(response("b"), response("a"))),
            G3,
        ),  # Q-gemini-parallel-sig
        (body(model({"text": "", "thoughtSignature": "s2"}, call(signature="s")), user(response())), G3),
        (body(model(call()), user(response())), G2),  # Gemini 2: no signatures needed
        (body(model(call(call_id="x1", signature="s")), user(response(call_id="x1"))), G3),
        (body(model({"text": "ok"}), user({"text": "more"})), G3),
        (
            body(
                tools=[{"functionDeclarations": [{"name": "mcp.fs-read", "parametersJsonSchema": {"type": "object"}}]}],
                toolConfig={"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["mcp.fs-read"]}},
                systemInstruction={"parts": [{"text": "be brief"}]},
            ),
            G3,
        ),
        (
            body(
                tools=[
                    {"function_declarations": [{"name": "r", "parameters": {"type": "OBJECT"}}]},
                    {"googleSearch": {}},
                ]
            ),
            G3,
        ),
    ],
)
def test_gemini_accepts(request_body: dict[str, Any], model_name: str) -> None:
    assert validate_gemini_request(request_body, model=model_name) == []


@pytest.mark.parametrize(
    ("request_body", "problem"),
    [
        ({"contents": []}, "contents is not specified"),
        (body({"role": "assistant", "parts": [{"text": "x"}]}), "Please use a valid role: user, model."),
        (body(model()), "contents[1].parts: contents.parts must not be empty"),
        (body(model({"text": ""})), "required oneof field 'data' must have one initialized field"),
        (body(model({"text": "a", "functionCall": {"name": "r"}})), "oneof field 'data'"),
        (body(model(call()), user(response(value="plain text"))), "function_response.response: must be an object"),
        (
            body(model(call(), call()), user(response())),
            "the number of function response parts is equal to the number of",
        ),
        (
            body(model(call()), user({"text": "what?"})),
            "contents[1]: a function call turn must be followed by a function",
        ),
        (body(model(call())), "must be followed by a function response turn"),
        (body(user(response())), "function response turn comes immediately after a function call turn"),
        (
            body(model({"text": "hmm"}), model(call()), user(response())),
            "function call turn comes immediately after a user turn",
        ),
        (body(model(call("a")), user(response("b"))), "functionResponse names do not match"),
        (
            body(model(call(call_id="x1")), user(response(call_id="x2"))),
            "functionResponse.id does not match functionCall.id",
        ),
        (body(model(call(call_id="x1")), user(response())), "functionResponse.id does not match functionCall.id"),
        (body(toolConfig={"functionCallingConfig": {"mode": "REQUIRED"}}), "function_calling_config.mode"),
        (
            body(toolConfig={"functionCallingConfig": {"mode": "AUTO", "allowedFunctionNames": ["r"]}}),
            "only when mode is ANY",
        ),
        (body(tools=[{"type": "function", "function": {"name": "r"}}]), "Unknown name 'function' at 'tools[0]'"),
        (body(tools=[{"functionDeclarations": [{"name": "9bad name"}]}]), "Invalid function name"),
        (
            body(tools=[{"functionDeclarations": [{"name": "r", "parameters": {}, "parametersJsonSchema": {}}]}]),
            "parameters and parameters_json_schema are exclusive",
        ),
    ],
)
def test_gemini_refuses(request_body: dict[str, Any], problem: str) -> None:
    problems = validate_gemini_request(request_body, model=G2)
    assert len(problems) == 1, problems
    assert problem in problems[0]
    assert (problems[0].status, problems[0].error_type) == (400, "INVALID_ARGUMENT")


def test_gemini_3_wants_a_signature_on_the_first_call_of_each_model_turn() -> None:
    unsigned = body(model(call("a"), call("b")), user(response("a"), response("b")))
    [problem] = validate_gemini_request(unsigned, model=G3)
    assert problem.startswith("Function call is missing a thought_signature in functionCall parts.")
    assert "function call `default_api:a` , position 1" in problem
    assert validate_gemini_request(unsigned, model=G2) == []
    second_turn = body(model(call(signature="s")), user(response()), model({"text": "x"}, call()), user(response()))
    [problem] = validate_gemini_request(second_turn, model=G3)
    assert "position 2" in problem and "(contents[3])" in problem


def test_issued_signatures_and_ids_must_come_back_unchanged() -> None:
    issued = IssuedParts()
    issued.remember([call("read", "id1", "sig1", path="a"), call("list", "id2")])
    good = body(
        model(call("read", "id1", "sig1", path="a"), call("list", "id2")),
        user(response("read", "id1"), response("list", "id2")),
    )
    assert validate_gemini_request(good, model=G3, issued=issued) == []
    for turn, problem in [
        (
            model(call("read", "id1", "sig1", path="b"), call("list", "id2")),
            "contents[1].parts[0]: Corrupted thought signature.",
        ),
        (
            model(call("read", "id1", "sig-x", path="a"), call("list", "id2")),
            "contents[1].parts[0]: Corrupted thought signature.",
        ),
        (
            model(call("read", "id1", SKIP_SIGNATURE, path="a"), call("list", "id9")),
            "functionCall.id 'id9' was not issued",
        ),
    ]:
        replies = user(*(response(p["functionCall"]["name"], p["functionCall"]["id"]) for p in turn["parts"]))
        problems = validate_gemini_request(body(turn, replies), model=G3, issued=issued)
        assert [p for p in problems if problem in p], problems


def test_the_route_issues_ids_and_signatures_and_checks_them(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.gemini.enqueue(gemini_tool_calls([("read", {"path": "a"}), ("list", {})], ids=True, signatures=True))
    answer = post(client, fake_upstream, "gemini", body())
    parts = answer.json()["candidates"][0]["content"]["parts"]
    assert "thoughtSignature" in parts[0] and "thoughtSignature" not in parts[1]
    ids = [p["functionCall"]["id"] for p in parts]
    issued = fake_upstream.gemini.issued
    assert set(issued.calls) == set(ids) and list(issued.signatures) == [parts[0]["thoughtSignature"]]

    replies = user(response("list", ids[1]), response("read", ids[0]))
    assert post(client, fake_upstream, "gemini", body(model(*parts), replies)).status_code == 200
    tampered = copy.deepcopy(parts)
    tampered[0]["functionCall"]["args"] = {"path": "b"}
    refused = post(client, fake_upstream, "gemini", body(model(*tampered), replies))
    assert refused.status_code == 400
    assert refused.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "Corrupted thought signature." in refused.json()["error"]["message"]
    assert len(fake_upstream.violations) >= 1


def test_text_answers_can_be_signed_and_empty_signed_parts_are_kept() -> None:
    reply = gemini_tool_calls([("read", {})], signatures=True, signed_empty_part=True)
    parts = reply.body["candidates"][0]["content"]["parts"]
    assert parts[-1]["text"] == "" and parts[-1]["thoughtSignature"] != parts[0]["thoughtSignature"]
    assert "thoughtSignature" in gemini_text("x", signature=True).body["candidates"][0]["content"]["parts"][0]
    assert reply.body["candidates"][0]["finishReason"] == "STOP"  # Gemini has no tool-call reason


def test_the_stream_has_cumulative_usage_and_no_terminator(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    reply = gemini_tool_calls([("read", {"p": 1})], text="Reading.", thought="Plan it.", ids=True, thoughts_tokens=6)
    fake_upstream.gemini.enqueue(reply)
    events = sse(client, fake_upstream, "gemini", body())
    data = [e.json() for e in events]
    assert all("[DONE]" not in e.data for e in events)
    totals = [d["usageMetadata"]["totalTokenCount"] for d in data]
    assert totals == sorted(totals) and totals[-1] == reply.body["usageMetadata"]["totalTokenCount"]
    assert [d["candidates"][0].get("finishReason") for d in data] == [None] * (len(data) - 1) + ["STOP"]
    read = read_gemini_stream(e.data for e in events)
    assert read["parts"] == reply.body["candidates"][0]["content"]["parts"]
    assert read["usage"] == reply.body["usageMetadata"]


def test_without_alt_sse_the_stream_is_one_json_array_and_a_violation(
    fake_upstream: FakeUpstream, client: httpx.Client
) -> None:
    url = chat_url(fake_upstream, "gemini").replace(":generateContent", ":streamGenerateContent")
    response_ = client.post(url, json=body(), headers=headers_for("gemini"))
    assert response_.headers["content-type"] == "application/json"
    chunks = response_.json()
    assert (
        isinstance(chunks, list)
        and "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks) == "echo: go"
    )
    assert fake_upstream.violations == [
        "gemini: streamGenerateContent without alt=sse answers one JSON array, which SSE readers see as nothing"
    ]


def test_the_model_comes_from_the_path(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    unsigned = body(model(call()), user(response()))
    assert post(client, fake_upstream, "gemini", unsigned, model=G2).status_code == 200
    assert post(client, fake_upstream, "gemini", unsigned, model=G3).status_code == 400
    echo = post(client, fake_upstream, "gemini", body(), model=G2).json()
    assert echo["modelVersion"] == G2


def test_a_blocked_prompt_is_a_200_with_only_prompt_feedback(  # Q-gemini-block-200
    fake_upstream: FakeUpstream, client: httpx.Client
) -> None:
    blocked = {
        "promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3},
    }
    fake_upstream.gemini.enqueue(message(blocked), message(blocked))
    assert [e.json() for e in sse(client, fake_upstream, "gemini", body())] == [blocked]
    assert post(client, fake_upstream, "gemini", body()).json() == blocked


@given(
    text=st.one_of(st.none(), st.text(min_size=1, max_size=30)),
    thought=st.one_of(st.none(), st.text(min_size=1, max_size=30)),
    calls=st.lists(
        st.tuples(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), st.dictionaries(st.text(max_size=4), st.integers())),
        max_size=3,
    ),
    ids=st.booleans(),
    signatures=st.booleans(),
    usage=st.tuples(st.integers(0, 999), st.integers(0, 999)),
)
def test_any_gemini_body_streams_back_to_itself(
    text: str | None,
    thought: str | None,
    calls: list[tuple[str, dict[str, int]]],
    ids: bool,
    signatures: bool,
    usage: tuple[int, int],
) -> None:
    if calls:
        reply = gemini_tool_calls(calls, text=text, thought=thought, ids=ids, signatures=signatures, usage=usage)
    else:
        reply = gemini_text(text or "x", thought=thought, signature=signatures, usage=usage)
    events = gemini_sse_events(reply.body)
    read = read_gemini_stream(events)
    assert read["parts"] == reply.body["candidates"][0]["content"]["parts"]
    assert (read["finish"], read["usage"]) == ("STOP", reply.body["usageMetadata"])
    counts = [json.loads(e)["usageMetadata"]["candidatesTokenCount"] for e in events]
    assert counts == sorted(counts)
