"""End to end over stdio: a prompt Gemini blocks is a content refusal that no fallback retries, and tool
calls whose arguments are JSON null reach the host as ``{}`` on every wire that sends them (issue "Two
real answers read wrong"). Each answer is sent as the service streams it and, where noted, as the JSON
body of a proxy that ignored ``stream: true``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    MessageReply,
    anthropic_text,
    cohere_call_id,
    cohere_tool_calls,
    k2_call_id,
    kimi_tool_calls,
    message,
    openai_call_id,
    openai_tool_calls,
    raw_body,
)
from harness import every_provider_env, router_session

pytestmark = pytest.mark.e2e

PING = {"name": "ping", "description": "Check the service.", "input_schema": {"type": "object", "properties": {}}}
BLOCKED = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 7}}
BLOCKED_WITH_MESSAGE = {
    "promptFeedback": {"blockReason": "MODEL_ARMOR", "blockReasonMessage": "Blocked by the project's Model Armor."},
    "usageMetadata": {"promptTokenCount": 7},
}


def env(fake: FakeUpstream) -> dict[str, str]:
    return {
        **every_provider_env(fake),
        "GEMINI_API_KEY": "gemini-e2e-secret-0123456789",
        "GEMINI_BASE_URL": fake.base_url("gemini"),
        "CO_API_KEY": "cohere-e2e-secret-0123456789",
        "COHERE_BASE_URL": fake.base_url("cohere"),
    }


def as_proxy_body(reply: MessageReply) -> Any:
    """The same answer as one JSON body, as a proxy that ignores ``stream: true`` sends it."""
    return raw_body(200, json.dumps(reply.body).encode())


async def call(fake: FakeUpstream, log: Path, **args: Any) -> tuple[bool, dict[str, Any]]:
    async with router_session(env(fake), log) as session:
        result = await session.call_tool("router_call", args)
    assert result.structured_content is not None
    return result.is_error, result.structured_content


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (BLOCKED, "blockReason PROHIBITED_CONTENT"),
        (BLOCKED_WITH_MESSAGE, "blockReason MODEL_ARMOR): Blocked by the project's Model Armor."),
    ],
)
async def test_a_blocked_prompt_is_content_filtered_and_not_retryable(
    fake_upstream: FakeUpstream, server_log: Path, body: dict[str, Any], said: str
) -> None:
    fake_upstream.gemini.enqueue(message(body))
    failed, structured = await call(fake_upstream, server_log, prompt="hello", model="gemini-2.5-flash")
    assert failed
    error = structured["error"]
    assert (error["code"], error["kind"], error["retryable"]) == ("GEMINI_API_ERROR", "CONTENT_FILTERED", False)
    assert said in error["message"]
    assert len(fake_upstream.gemini.requests) == 1  # never sent again
    assert fake_upstream.violations == []


async def test_a_fallback_chain_stops_at_a_blocked_prompt(fake_upstream: FakeUpstream, server_log: Path) -> None:
    fake_upstream.gemini.enqueue(message(BLOCKED))
    fake_upstream.anthropic.enqueue(anthropic_text("I would have answered."))
    failed, structured = await call(
        fake_upstream, server_log, prompt="hello", model="gemini-2.5-flash", fallback=["sonnet"]
    )
    assert failed
    assert structured["error"]["kind"] == "CONTENT_FILTERED"
    assert [(a["provider"], a["kind"]) for a in structured["attempts"]] == [("gemini", "CONTENT_FILTERED")]
    assert fake_upstream.anthropic.requests == []


def null_argument_replies() -> list[tuple[str, str, MessageReply]]:
    """(route, model, reply) for each wire that can send ``"arguments": "null"``."""
    return [
        ("cohere", "command-a-03-2025", cohere_tool_calls([(cohere_call_id("ping"), "ping", "null")])),
        ("openai", "gpt-4.1", openai_tool_calls([(openai_call_id(), "ping", "null")])),
        ("kimi", "kimi-k2.6", kimi_tool_calls([(k2_call_id("ping", 0), "ping", "null")], model="kimi-k2.6")),
    ]


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "proxy-body"])
@pytest.mark.parametrize(("route", "model", "reply"), null_argument_replies(), ids=["cohere", "openai", "kimi"])
async def test_null_arguments_are_no_arguments(
    fake_upstream: FakeUpstream, server_log: Path, route: str, model: str, reply: MessageReply, streamed: bool
) -> None:
    fake_upstream.route(route).enqueue(reply if streamed else as_proxy_body(reply))
    failed, structured = await call(fake_upstream, server_log, prompt="ping it", model=model, tools=[PING])
    assert not failed, structured
    (tool_call,) = structured["tool_calls"]
    assert (tool_call["name"], tool_call["input"]) == ("ping", {})
    assert structured["message"]["content"][-1]["input"] == {}
    assert not any("could not be read" in warning for warning in structured["warnings"])


async def test_arguments_that_are_no_object_are_kept_and_warned_about(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.route("openai").enqueue(openai_tool_calls([(openai_call_id(), "ping", "[1, 2]")]))
    failed, structured = await call(fake_upstream, server_log, prompt="ping it", model="gpt-4.1", tools=[PING])
    assert not failed
    (tool_call,) = structured["tool_calls"]
    assert tool_call["input"] == {"_parse_error": "arguments are a JSON array, not an object", "_raw": "[1, 2]"}
    (warning,) = [w for w in structured["warnings"] if "could not be read" in w]
    assert f"ping ({tool_call['id']})" in warning


async def test_a_history_tool_use_with_null_input_is_read_as_no_arguments(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    messages = [
        {"role": "user", "content": "ping it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "ping", "input": None}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "pong"}]},
    ]
    fake_upstream.anthropic.enqueue(anthropic_text("It answered pong."))
    failed, structured = await call(fake_upstream, server_log, messages=messages, model="sonnet", tools=[PING])
    assert not failed, structured
    (request,) = fake_upstream.anthropic.requests
    assert request.body["messages"][1]["content"][0]["input"] == {}
    assert fake_upstream.violations == []
