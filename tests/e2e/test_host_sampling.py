"""``provider: "host"``: the host's own model through MCP sampling, end to end: the real
``colibri-router`` process over stdio, the official client with (and without) a sampling callback."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from harness import SERVER_COMMAND
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CreateMessageRequestParams, CreateMessageResult, ErrorData, TextContent

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "COLIBRI_STATE_DIR": os.environ["COLIBRI_STATE_DIR"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
    }


@asynccontextmanager
async def session_with(sampling: Any, stderr: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=SERVER_COMMAND, args=[], env=env())
    with stderr.open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, sampling_callback=sampling) as session,
        ):
            await session.initialize()
            yield session


async def test_the_host_answers_through_sampling(tmp_path: Path) -> None:
    asked: list[CreateMessageRequestParams] = []

    async def sampling(context: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
        asked.append(params)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="The host's own answer."),
            model="host-model-7",
            stop_reason="endTurn",
        )

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
    async with session_with(sampling, tmp_path / "stderr.log") as session:
        result = await session.call_tool("router_call", arguments)
        models = (await session.call_tool("router_models", {"provider": "host"})).structured_content
        usage = (await session.call_tool("router_usage", {"since": "today"})).structured_content

    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    structured = result.structured_content
    assert structured is not None and json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
    assert structured["content"] == "The host's own answer."
    assert structured["provider"] == "host" and structured["model"] == "host-model-7"
    assert structured["cost_usd"] is None and structured["price_source"] == "host"
    (params,) = asked
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


async def test_a_host_that_declines_is_an_error_result(tmp_path: Path) -> None:
    async def sampling(context: Any, params: CreateMessageRequestParams) -> ErrorData:
        return ErrorData(code=-1, message="the user declined")

    async with session_with(sampling, tmp_path / "stderr.log") as session:
        result = await session.call_tool("router_call", {"provider": "host", "prompt": "hi"})
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert error["code"] == "HOST_API_ERROR" and "declined" in error["message"]


async def test_without_sampling_host_is_refused_naming_the_agents(tmp_path: Path) -> None:
    async with session_with(None, tmp_path / "stderr.log") as session:
        result = await session.call_tool("router_call", {"provider": "host", "prompt": "hi"})
        models = (await session.call_tool("router_models", {"provider": "host"})).structured_content
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert error["code"] == "INVALID_REQUEST"
    assert "sampling" in error["message"]
    assert all(name in error["message"] for name in ("claude-code", "codex", "gemini-cli"))
    assert models is not None and models["providers"][0]["configured"] is False
