"""A model name no rule places, through the real process: over stdio with the official client and from
the command line, refused with its close names before the strict fake upstream receives anything."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, kimi_text
from harness import SERVER_COMMAND, every_provider_env, router_session

from colibri_router.providers import BUILTIN

pytestmark = pytest.mark.e2e

HINT = 'a model the router does not know yet is sent by naming its provider, e.g. "kimi:<model>"'


def refusal(result: Any) -> dict[str, Any]:
    assert result.is_error
    error: dict[str, Any] = (result.structured_content or {})["error"]
    text = result.content[0].text
    assert text.startswith(f"INVALID_REQUEST: {error['message']}")
    assert error["code"] == error["kind"] == "INVALID_REQUEST"
    assert error["message"].endswith(HINT)
    return error


async def test_unplaced_names_are_refused_over_stdio_and_nothing_is_sent(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    async with router_session(every_provider_env(fake_upstream), server_log) as session:
        typo = refusal(await session.call_tool("router_call", {"prompt": "hi", "model": "sonet"}))
        prefix = refusal(await session.call_tool("router_call", {"prompt": "hi", "model": "nope:foo"}))
        chain = {"prompt": "hi", "model": "sonnet", "fallback": ["gpt-mini", "opuss"]}
        fallback = refusal(await session.call_tool("router_call", chain))
        judge = refusal(
            await session.call_tool(
                "router_ask_many", {"prompt": "Is it safe?", "models": ["sonnet", "kimi"], "judge": "opuss"}
            )
        )
        fake_upstream.kimi.enqueue(kimi_text("the server still serves"))
        after = await session.call_tool("router_call", {"prompt": "hi", "model": "kimi"})

    assert "unknown model 'sonet'" in typo["message"] and "(did you mean: sonnet?)" in typo["message"]
    assert typo["model"] == "sonet"
    assert f"unknown provider 'nope' in model 'nope:foo' (providers: {', '.join(BUILTIN)})" in prefix["message"]
    assert "unknown model 'opuss'" in fallback["message"] and "did you mean: opus" in fallback["message"]
    assert "unknown model 'opuss'" in judge["message"] and "did you mean: opus" in judge["message"]
    # Only the last call reached the fake: no model of the refused calls, nor the ask_many's, was asked.
    assert [request.route for request in fake_upstream.requests] == ["kimi"]
    assert fake_upstream.violations == []
    assert (after.structured_content or {})["content"] == "the server still serves"


def test_the_command_line_refuses_an_unplaced_model_and_judge(fake_upstream: FakeUpstream) -> None:
    env = every_provider_env(fake_upstream)
    called = _cli(env, "call", "hi", "--model", "sonet")
    judged = _cli(env, "ask-many", "hi", "--model", "sonnet", "--model", "kimi", "--judge", "opuss")
    for done, name, close in ((called, "sonet", "sonnet"), (judged, "opuss", "opus")):
        assert done.returncode == 1, done.stdout + done.stderr
        error = json.loads(done.stdout)["error"]
        assert error["code"] == "INVALID_REQUEST"
        assert f"unknown model {name!r}" in error["message"] and f"did you mean: {close}" in error["message"]
    assert fake_upstream.requests == []
    fake_upstream.kimi.enqueue(kimi_text("sent as asked"))
    anyway = _cli(env, "call", "hi", "--model", "kimi:sonet")  # the documented way to send an unknown name
    assert anyway.returncode == 0, anyway.stdout + anyway.stderr
    assert [request.body["model"] for request in fake_upstream.requests] == ["sonet"]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SERVER_COMMAND, *args], check=False, env=env, capture_output=True, text=True, timeout=60)
