"""``COLIBRI_CONFIRM_OVER_USD`` end to end: the real ``colibri-router`` process with the official client
over stdio, on both protocol eras (the 2025 handshake, ``mode="legacy"``, and 2026-07-28, which the
client negotiates by ``server/discover``), against the loopback fake upstream. The user's answer is
the client's elicitation callback: accepted, declined, or never given. Over Streamable HTTP, where
the stateless server reaches no client, the threshold is a cost cap even for a client that could
answer."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from fake_upstream import FakeUpstream, kimi_text
from harness import KIMI_KEY, SERVER_COMMAND
from http_harness import http_server, tokens_for
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequiredResult

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
KIMI = "kimi:kimi-k2.6"
LOW = "0.000001"  # below any priced call's worst case


class User:
    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action=self.action)  # type: ignore[arg-type]


def env(fake_upstream: FakeUpstream, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "COLIBRI_STATE_DIR": os.environ["COLIBRI_STATE_DIR"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "COLIBRI_KIMI_API_KEY": KIMI_KEY,
        "COLIBRI_KIMI_BASE_URL": fake_upstream.kimi_base_url,
        "COLIBRI_CONFIRM_OVER_USD": LOW,
        **extra,
    }


@asynccontextmanager
async def client_with(user: Any, stderr: Path, mode: str, server_env: dict[str, str]) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=SERVER_COMMAND, args=[], env=server_env)
    with stderr.open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, elicitation_callback=user) as client:
            assert client.protocol_version == ERAS[mode]
            yield client


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error and result.structured_content is not None
    return result.structured_content["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ERAS)
async def test_accepted_the_call_is_sent(tmp_path: Path, mode: str, fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("worth it"))
    user = User("accept")
    async with client_with(user, tmp_path / "stderr.log", mode, env(fake_upstream)) as client:
        result = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi", "max_tokens": 2000})
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    assert (result.structured_content or {})["content"] == "worth it"
    (question,) = user.asked
    assert "kimi-k2.6" in question and "up to $" in question and "\n" not in question
    assert len(fake_upstream.kimi.requests) == 1


@pytest.mark.parametrize("mode", ERAS)
async def test_declined_nothing_is_sent(tmp_path: Path, mode: str, fake_upstream: FakeUpstream) -> None:
    user = User("decline")
    async with client_with(user, tmp_path / "stderr.log", mode, env(fake_upstream)) as client:
        single = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
        many = await client.call_tool(
            "router_ask_many", {"models": [KIMI, "kimi:kimi-k2.5"], "judge": KIMI, "prompt": "hi"}
        )
        after = await client.call_tool("router_models", {"provider": "kimi"})
    for result in (single, many):
        error = error_of(result)
        assert (error["code"], error["retryable"]) == ("CONFIRMATION_DECLINED", False)
    assert len(user.asked) == 2  # once per call, the second naming both models and the judge
    assert "kimi-k2.5" in user.asked[1] and user.asked[1].count("kimi-k2.6") == 2
    assert fake_upstream.requests == []
    assert not after.is_error  # the server serves on


async def test_unanswered_on_2025_ends_at_the_deadline(tmp_path: Path, fake_upstream: FakeUpstream) -> None:
    async def silent(context: Any, params: ElicitRequestParams) -> ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async with client_with(silent, tmp_path / "stderr.log", "legacy", env(fake_upstream)) as client:
        result = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi", "timeout_s": 1})
    error = error_of(result)
    assert error["code"] == "CONFIRMATION_DECLINED" and "no answer" in error["message"]
    assert fake_upstream.requests == []


async def test_unanswered_on_2026_ends_at_the_deadline(tmp_path: Path, fake_upstream: FakeUpstream) -> None:
    """The client never answers the question in the InputRequiredResult; its retries without an
    answer get the question again until the call's deadline passes, then the refusal."""
    arguments = {"model": KIMI, "prompt": "hi", "timeout_s": 1}
    async with client_with(User("accept"), tmp_path / "stderr.log", "auto", env(fake_upstream)) as client:
        answer: CallToolResult | InputRequiredResult = await client.session.call_tool(
            "router_call", arguments, allow_input_required=True
        )
        assert isinstance(answer, InputRequiredResult)
        assert all(isinstance(request, ElicitRequest) for request in (answer.input_requests or {}).values())
        while isinstance(answer, InputRequiredResult):
            await anyio.sleep(0.1)
            answer = await client.session.call_tool(
                "router_call", arguments, request_state=answer.request_state, allow_input_required=True
            )
    error = error_of(answer)
    assert error["code"] == "CONFIRMATION_DECLINED" and "no answer" in error["message"]
    assert fake_upstream.requests == []


@pytest.mark.parametrize("mode", ERAS)
async def test_without_elicitation_the_threshold_is_a_cap(
    tmp_path: Path, mode: str, fake_upstream: FakeUpstream
) -> None:
    async with client_with(None, tmp_path / "stderr.log", mode, env(fake_upstream)) as client:
        result = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
    error = error_of(result)
    assert error["code"] == "BUDGET_EXCEEDED" and "COLIBRI_CONFIRM_OVER_USD" in error["message"]
    assert fake_upstream.requests == []


async def test_over_http_the_threshold_is_a_cap_even_for_a_client_that_could_answer(
    tmp_path: Path, fake_upstream: FakeUpstream
) -> None:
    tokens = tmp_path / "tokens"
    token = tokens_for(tokens, "alice")["alice"]
    user = User("accept")
    with http_server(env(fake_upstream, COLIBRI_HTTP_TOKENS_FILE=str(tokens)), tmp_path / "stderr.log") as url:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http), elicitation_callback=user) as client,
        ):
            result = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
    error = error_of(result)
    assert error["code"] == "BUDGET_EXCEEDED" and "cannot be asked" in error["message"]
    assert user.asked == [] and fake_upstream.requests == []
