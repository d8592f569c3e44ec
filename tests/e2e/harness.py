"""Helpers for driving the real ``colibri-router`` process over stdio with the official MCP client.

Every tool result a session here receives, error or not, is checked against the tool's output schema
from tools/list (tests/result_schemas.py, installed for the whole run by tests/conftest.py)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fake_upstream import FakeUpstream
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# The console script installed next to the interpreter running the tests (uv's .venv/bin).
SERVER_COMMAND = str(Path(sys.executable).with_name("colibri-router"))
KIMI_KEY = "sk-kimi-e2e-secret-0123456789"
ANTHROPIC_KEY = "sk-ant-e2e-secret-9876543210"


def host_env(fake_upstream: FakeUpstream) -> dict[str, str]:
    """The environment an MCP host would pass: keys and base URLs pointing at the loopback fake."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "COLIBRI_KIMI_API_KEY": KIMI_KEY,
        "COLIBRI_KIMI_BASE_URL": fake_upstream.kimi_base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": fake_upstream.anthropic_base_url,
        "COLIBRI_LOG_LEVEL": "info",
        # The server's ledger and threads go where the test says (the conftest's temp directory).
        "COLIBRI_STATE_DIR": os.environ["COLIBRI_STATE_DIR"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
    }


# Every keyed built-in provider, pointed at its route of the fake (the fake's route names are the
# registry's, but Claude's route is "anthropic").
PROVIDER_ROUTES = {
    "kimi": "kimi",
    "claude": "anthropic",
    "kimi-anthropic": "kimi-anthropic",
    "openai": "openai",
    "mistral": "mistral",
    "openrouter": "openrouter",
    "groq": "groq",
    "together": "together",
    "fireworks": "fireworks",
    "siliconflow": "siliconflow",
    "deepseek": "deepseek",
    "vllm": "vllm",
    "lmstudio": "lmstudio",
}


def every_provider_env(fake_upstream: FakeUpstream) -> dict[str, str]:
    """``host_env`` plus a key and a base URL for every built-in provider, all on the fake."""
    from colibri_router.providers import BUILTIN

    env = host_env(fake_upstream)
    for name, route in PROVIDER_ROUTES.items():
        spec = BUILTIN[name]
        env[spec.base_url_env] = fake_upstream.base_url(route)
        for variable in spec.key_envs:
            env.setdefault(variable, f"sk-{name}-e2e-secret-0123456789")
    return env


@asynccontextmanager
async def router_session(env: dict[str, str], stderr_path: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=SERVER_COMMAND, args=[], env=env)
    with stderr_path.open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


ADD_TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "input_schema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


async def add_turn(session: ClientSession, messages: list[dict[str, Any]], **args: Any) -> dict[str, Any]:
    """One router_call offering the ``add`` tool; the host appends the answer and, for every call, the
    tool's result (the sum), as an MCP host runs a tool loop."""
    result = await session.call_tool("router_call", {"messages": messages, "tools": [ADD_TOOL], **args})
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    structured = result.structured_content
    assert structured is not None
    assert json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
    messages.append(structured["message"] or {"role": "assistant", "content": structured["content"]})
    if structured["tool_calls"]:
        results = [
            {"type": "tool_result", "tool_use_id": call["id"], "content": str(call["input"]["a"] + call["input"]["b"])}
            for call in structured["tool_calls"]
        ]
        messages.append({"role": "user", "content": results})
    return structured
