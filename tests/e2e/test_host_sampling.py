"""``provider: "host"``: the host's own model through MCP sampling, end to end: the real
``colibri-router`` process with the official client, with (and without) a sampling callback, on both
protocol eras: the 2025 ``initialize`` handshake (``mode="legacy"``) and 2026-07-28, which the client
negotiates by ``server/discover`` (``mode="auto"``). Over stdio the host works on both; over
Streamable HTTP (stateless) it is refused on both."""

from __future__ import annotations

import json
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
from mcp.shared.exceptions import MCPError
from mcp.types import CreateMessageRequestParams, ErrorData
from sampling_host import Host

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# The client's mode, and the protocol version it must end up speaking.
ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def env(**extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "COLIBRI_STATE_DIR": os.environ["COLIBRI_STATE_DIR"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        **extra,
    }


@asynccontextmanager
async def client_with(sampling: Any, stderr: Path, mode: str, **extra_env: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=SERVER_COMMAND, args=[], env=env(**extra_env))
    with stderr.open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, sampling_callback=sampling) as client:
            assert client.protocol_version == ERAS[mode]
            yield client


async def refusing(context: Any, params: CreateMessageRequestParams) -> ErrorData:
    return ErrorData(code=-1, message="the user declined")


@pytest.mark.parametrize("mode", ERAS)
async def test_the_host_answers_through_sampling(tmp_path: Path, mode: str) -> None:
    host = Host("The host's own answer {}.")
    messages = [
        {"role": "user", "content": "First question"},
        {"role": "assistant", "content": "First answer"},
        {"role": "user", "content": "Second question"},
    ]
    arguments = {
        "provider": "host",
        "messages": messages,
        "system_prompt": "Be brief.",
        "max_tokens": 321,
        "temperature": 0.3,
        "model": "claude-sonnet-4-5",
    }
    async with client_with(host, tmp_path / "stderr.log", mode) as client:
        result = await client.call_tool("router_call", arguments)
        models = (await client.call_tool("router_models", {"provider": "host"})).structured_content
        usage = (await client.call_tool("router_usage", {"since": "today"})).structured_content

    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    structured = result.structured_content
    assert structured is not None and json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
    assert structured["content"] == "The host's own answer 1."
    assert structured["provider"] == "host" and structured["model"] == "host-model-7"
    assert structured["cost_usd"] is None and structured["price_source"] == "host"
    (params,) = host.asked
    assert [(m.role, m.content.text) for m in params.messages] == [  # type: ignore[union-attr]
        ("user", "First question"),
        ("assistant", "First answer"),
        ("user", "Second question"),
    ]
    assert params.system_prompt == "Be brief." and params.max_tokens == 321 and params.temperature == 0.3
    assert params.model_preferences is not None
    assert [hint.name for hint in params.model_preferences.hints or []] == ["claude-sonnet-4-5"]
    assert models is not None and models["providers"][0]["configured"] is True
    assert usage is not None and usage["total"]["calls"] == 1 and usage["total"]["unpriced_calls"] == 1


@pytest.mark.parametrize("mode", ERAS)
async def test_a_call_that_asks_the_host_twice_after_a_paid_model_runs_once_and_reports_progress(
    tmp_path: Path, mode: str, fake_upstream: FakeUpstream
) -> None:
    """On 2026-07-28 the call waits across rounds: Kimi is asked once, both host answers arrive, and
    progress sent after the host answered reaches the client on the latest round's stream."""
    fake_upstream.kimi.enqueue(kimi_text("from kimi"))
    host = Host("The host's own answer {}.")
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    extra = {"COLIBRI_KIMI_API_KEY": KIMI_KEY, "COLIBRI_KIMI_BASE_URL": fake_upstream.kimi_base_url}
    async with client_with(host, tmp_path / "stderr.log", mode, **extra) as client:
        result = await client.call_tool(
            "router_ask_many",
            {"models": ["kimi:kimi-k2.6", "host:a", "host:b"], "prompt": "hi"},
            progress_callback=on_progress,
        )

    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    answers = (result.structured_content or {})["answers"]
    assert [answer["provider"] for answer in answers] == ["kimi", "host", "host"]
    assert sorted(answer["content"] for answer in answers[1:]) == [
        "The host's own answer 1.",
        "The host's own answer 2.",
    ]
    assert len([request for request in fake_upstream.requests if request.route == "kimi"]) == 1
    assert len(host.asked) == 2
    assert any(message.startswith("3/3") for message in progress), progress


async def test_a_host_that_declines_on_2025_is_an_error_result(tmp_path: Path) -> None:
    async with client_with(refusing, tmp_path / "stderr.log", "legacy") as client:
        result = await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert error["code"] == "HOST_API_ERROR" and "declined" in error["message"]


async def test_a_host_that_declines_on_2026_ends_the_call_on_the_client_and_the_server_serves_on(
    tmp_path: Path,
) -> None:
    """On 2026-07-28 the SDK's client ends its own call with its callback's error; the server, which
    never hears of it, goes on serving."""
    async with client_with(refusing, tmp_path / "stderr.log", "auto") as client:
        with pytest.raises(MCPError, match="the user declined"):
            await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})
        models = await client.call_tool("router_models", {"provider": "host"})
    assert not models.is_error and (models.structured_content or {})["providers"][0]["configured"] is True


@pytest.mark.parametrize("mode", ERAS)
async def test_without_sampling_host_is_refused_naming_the_agents(tmp_path: Path, mode: str) -> None:
    async with client_with(None, tmp_path / "stderr.log", mode) as client:
        result = await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})
        models = (await client.call_tool("router_models", {"provider": "host"})).structured_content
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert error["code"] == "INVALID_REQUEST"
    assert "sampling" in error["message"]
    assert all(name in error["message"] for name in ("claude-code", "codex", "gemini-cli"))
    assert models is not None and models["providers"][0]["configured"] is False


@pytest.mark.parametrize("mode", ERAS)
async def test_over_http_host_is_refused_pointing_to_stdio(tmp_path: Path, mode: str) -> None:
    """Stateless Streamable HTTP carries no sampling request to the client on either era, so a client
    that declares sampling is still refused, with a message that says why (not that it declared none)."""
    tokens = tmp_path / "tokens"
    token = tokens_for(tokens, "alice")["alice"]
    host = Host("The host's own answer {}.")
    server_env = env(COLIBRI_HTTP_TOKENS_FILE=str(tokens))
    with http_server(server_env, tmp_path / "stderr.log") as url:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode, sampling_callback=host) as client,
        ):
            assert client.protocol_version == ERAS[mode]
            result = await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert error["code"] == "INVALID_REQUEST"
    assert "over HTTP" in error["message"] and "stdio" in error["message"]
    assert host.asked == []


async def test_a_client_that_cancels_a_2026_round_cancels_the_call(tmp_path: Path, fake_upstream: FakeUpstream) -> None:
    """The call runs on between rounds; a client that gives up on a round (its request cancelled) ends
    it there: the upstream request it still has open is closed, and the server serves on."""
    fake_upstream.kimi.enqueue(kimi_text("too late", hold_open_s=60))
    host_answered = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        # Sent after the host's answer arrived, so on the stream of the round that carried it.
        if (message or "").startswith("1/2 host"):
            host_answered.set()

    extra = {"COLIBRI_KIMI_API_KEY": KIMI_KEY, "COLIBRI_KIMI_BASE_URL": fake_upstream.kimi_base_url}
    async with client_with(Host("The host's own answer {}."), tmp_path / "stderr.log", "auto", **extra) as client:
        async with anyio.create_task_group() as group:

            async def ask() -> None:
                await client.call_tool(
                    "router_ask_many",
                    {"models": ["kimi:kimi-k2.6", "host:a"], "prompt": "hi"},
                    progress_callback=on_progress,
                )

            group.start_soon(ask)
            await host_answered.wait()
            group.cancel_scope.cancel()
        disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 20.0)
        after = await client.call_tool("router_call", {"provider": "host", "prompt": "still there?"})
    assert disconnect is not None and disconnect.route == "kimi", "the upstream request was left open"
    assert not after.is_error
