"""The real ``colibri-router`` process, driven over stdio by the official MCP client, against the
loopback fake upstream (real sockets, no mocks on this path)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_text,
    anthropic_tool_use,
    error,
    kimi_text,
    kimi_tool_calls,
    raw_body,
)
from harness import ANTHROPIC_KEY, KIMI_KEY, SERVER_COMMAND, router_session
from mcp.types import LATEST_PROTOCOL_VERSION

from colibri_router.providers import BUILTIN

pytestmark = pytest.mark.e2e

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


async def test_lists_router_call_with_its_schema(server_env: dict[str, str], server_log: Path) -> None:
    async with router_session(server_env, server_log) as session:
        tools = (await session.list_tools()).tools
    assert tools[0].name == "router_call"
    schema = tools[0].input_schema
    assert schema["properties"]["provider"]["anyOf"][0]["enum"] == list(BUILTIN)  # the registry's names
    assert schema["properties"]["max_tokens"]["minimum"] == 1  # optional: not required, no "or null"
    assert tools[0].output_schema is not None


async def test_text_from_kimi_and_claude(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("Bonjour from K2", usage=(11, 7)))
    fake_upstream.anthropic.enqueue(anthropic_text("Hello from Claude", usage=(13, 5)))
    async with router_session(server_env, server_log) as session:
        kimi = await session.call_tool("router_call", {"prompt": "say hi", "system_prompt": "be brief"})
        claude = await session.call_tool("router_call", {"prompt": "say hi", "model": "claude-sonnet-4-5"})
    assert kimi.structured_content is not None and claude.structured_content is not None
    assert kimi.structured_content["content"] == "Bonjour from K2"
    assert kimi.structured_content["provider"] == "kimi"
    assert (kimi.structured_content["prompt_tokens"], kimi.structured_content["completion_tokens"]) == (11, 7)
    # The text block holds the same object as compact JSON, for hosts that read only the text.
    assert json.loads(kimi.content[0].text) == kimi.structured_content
    assert kimi.structured_content["message"] is None  # nothing to replay: the host appends the text
    assert claude.structured_content["content"] == "Hello from Claude"
    assert claude.structured_content["provider"] == "claude"
    assert claude.structured_content["stop_reason"] == "end_turn"
    kimi_request, claude_request = fake_upstream.kimi.requests[0], fake_upstream.anthropic.requests[0]
    assert kimi_request.headers["authorization"] == f"Bearer {KIMI_KEY}"
    assert kimi_request.body["messages"][0] == {"role": "system", "content": "be brief"}
    assert claude_request.headers["x-api-key"] == ANTHROPIC_KEY
    assert fake_upstream.violations == []


async def test_tool_calls_from_kimi_and_claude(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_tool_calls([("functions.get_weather:0", "get_weather", '{"city": "Paris"}')]))
    fake_upstream.anthropic.enqueue(anthropic_tool_use([("toolu_01abc", "get_weather", {"city": "Oslo"})]))
    async with router_session(server_env, server_log) as session:
        kimi = await session.call_tool("router_call", {"prompt": "weather?", "tools": [WEATHER_TOOL]})
        claude = await session.call_tool(
            "router_call", {"prompt": "weather?", "tools": [WEATHER_TOOL], "provider": "claude"}
        )
    for result, city in ((kimi, "Paris"), (claude, "Oslo")):
        structured: dict[str, Any] = result.structured_content or {}
        assert structured["stop_reason"] == "tool_use"
        [call] = structured["tool_calls"]
        assert (call["name"], call["input"]) == ("get_weather", {"city": city})
        assert structured["content"] == ""
        blocks = structured["message"]["content"]
        assert blocks == [{"type": "tool_use", "id": call["id"], "name": "get_weather", "input": {"city": city}}]
    assert fake_upstream.kimi.requests[0].body["tools"][0]["function"]["name"] == "get_weather"
    assert fake_upstream.violations == []


async def test_upstream_500_then_200_is_retried(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(
        error(500, error_type="server_error", message="upstream hiccup"),
        kimi_text("second time lucky"),
    )
    async with router_session(server_env, server_log) as session:
        result = await session.call_tool("router_call", {"prompt": "hi"})
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["content"] == "second time lucky"
    assert len(fake_upstream.kimi.requests) == 2


async def test_missing_key_then_the_server_keeps_serving(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    del server_env["COLIBRI_KIMI_API_KEY"]
    async with router_session(server_env, server_log) as session:
        missing = await session.call_tool("router_call", {"prompt": "hi", "provider": "kimi"})
        works = await session.call_tool("router_call", {"prompt": "hi", "provider": "claude"})
    assert missing.is_error
    assert missing.content[0].text.startswith("KIMI_CONFIG_ERROR: ")
    assert not works.is_error
    assert fake_upstream.kimi.requests == []


async def test_malformed_json_from_upstream_is_an_api_error_not_retried(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(raw_body(200, b"{this is not json", "application/json"))
    fake_upstream.anthropic.enqueue(raw_body(200, b'{"unexpected": true}', "application/json"))
    async with router_session(server_env, server_log) as session:
        kimi = await session.call_tool("router_call", {"prompt": "hi"})
        claude = await session.call_tool("router_call", {"prompt": "hi", "provider": "claude"})
    assert kimi.is_error and kimi.content[0].text.startswith("KIMI_API_ERROR: malformed response body")
    assert claude.is_error and claude.content[0].text.startswith("ANTHROPIC_API_ERROR: malformed response body")
    assert len(fake_upstream.kimi.requests) == 1
    assert len(fake_upstream.anthropic.requests) == 1


async def test_logs_go_to_stderr_as_json_without_keys(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("ok", usage=(2, 3)))
    fake_upstream.anthropic.enqueue(
        error(401, error_type="authentication_error", message=f"invalid x-api-key {ANTHROPIC_KEY}")
    )
    async with router_session(server_env, server_log) as session:
        await session.call_tool("router_call", {"prompt": "hi"})
        failed = await session.call_tool("router_call", {"prompt": "hi", "provider": "claude"})
    assert ANTHROPIC_KEY not in failed.content[0].text
    log = server_log.read_text()
    events = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    kimi_lines = [e["event"] for e in events if e["event"].startswith("[kimi] ")]
    assert len(kimi_lines) == 1
    assert kimi_lines[0].startswith("[kimi] model=kimi-k2-0905-preview prompt_tokens=2 completion_tokens=3 latency_ms=")
    assert KIMI_KEY not in log and ANTHROPIC_KEY not in log


def test_stdout_carries_only_json_rpc(fake_upstream: FakeUpstream, server_env: dict[str, str]) -> None:
    """Raw pipes: every line the server writes to stdout is a JSON-RPC 2.0 message."""
    fake_upstream.kimi.enqueue(kimi_text("fine"))
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "router_call", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "router_call", "arguments": {"prompt": "x"}},
        },
    ]
    process = subprocess.Popen(
        [SERVER_COMMAND], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env
    )
    assert process.stdin is not None and process.stdout is not None
    lines = []
    for request in requests:
        process.stdin.write((json.dumps(request) + "\n").encode())
        process.stdin.flush()
        if "id" in request:
            lines.append(process.stdout.readline().decode())
    rest, stderr = process.communicate(timeout=20)  # closes stdin: the server exits on EOF
    lines.extend(rest.decode().splitlines())
    messages = [json.loads(line) for line in lines if line.strip()]
    assert len(messages) >= 4
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert by_id[3]["result"]["isError"] is True
    assert by_id[4]["result"]["structuredContent"]["content"] == "fine"
    assert b"[kimi] model=" in stderr


def test_cli_call_prints_the_json_result(fake_upstream: FakeUpstream, server_env: dict[str, str]) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("from the terminal"))
    done = subprocess.run(
        [SERVER_COMMAND, "call", "--provider", "claude", "hello"],
        capture_output=True,
        env=server_env,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"] == "from the terminal"
    failed = subprocess.run(
        [SERVER_COMMAND, "call", "--provider", "kimi", "hello"],
        capture_output=True,
        env={k: v for k, v in server_env.items() if k != "COLIBRI_KIMI_API_KEY"},
        timeout=30,
        check=False,
    )
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["error"]["code"] == "KIMI_CONFIG_ERROR"


def test_version_and_help() -> None:
    version = subprocess.run([SERVER_COMMAND, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "colibri-router 0.1.0"
    helptext = subprocess.run([SERVER_COMMAND, "--help"], capture_output=True, text=True, check=True)
    assert "call" in helptext.stdout and "serve" in helptext.stdout
    module = subprocess.run(
        [os.path.join(os.path.dirname(SERVER_COMMAND), "python"), "-m", "colibri_router", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert module.stdout.strip() == "colibri-router 0.1.0"


async def test_concurrent_calls_share_one_session(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    async with router_session(server_env, server_log) as session:
        results = await asyncio.gather(*(session.call_tool("router_call", {"prompt": f"n{i}"}) for i in range(10)))
    assert sorted(r.structured_content["content"] for r in results if r.structured_content) == sorted(
        f"echo: n{i}" for i in range(10)
    )
