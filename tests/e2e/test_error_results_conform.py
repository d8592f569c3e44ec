"""End to end: the real server's results, errors of every kind on every tool included, conform to the
output schema tools/list declares (issue 31 §1), over stdio and over HTTP with the official Python
client, and over stdio with the official TypeScript client (Gemini CLI's), which refuses a result whose
structuredContent does not conform, errors included, with -32602 "Structured content does not match".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, error, kimi_text
from harness import SERVER_COMMAND, router_session
from http_harness import http_server, http_session, tokens_for
from jsonschema import Draft202012Validator
from mcp import ClientSession

pytestmark = pytest.mark.e2e

RATE_LIMITED = error(429, message="slow down", error_type="rate_limit_reached_error", headers={"Retry-After": "0"})
SCENARIO = {
    "colibri": 1,
    "name": "s",
    "models": ["kimi:kimi-k2-0905-preview"],
    "prompt": "hi",
    "expect": [{"type": "final_text", "contains": ["hello"]}],
}

# (tool, arguments, the error code expected or None for a success). The fake answers kimi in order:
# the first call's text, then four rate limits (one call's every attempt), then router_run's answer.
CALLS: list[tuple[str, dict[str, Any], str | None]] = [
    ("router_call", {"prompt": "hi"}, None),
    ("router_call", {"prompt": "hi"}, "KIMI_RETRIES_EXHAUSTED"),
    ("router_call", {"prompt": "hi", "provider": "openai"}, "OPENAI_CONFIG_ERROR"),
    ("router_call", {"prompt": "hi", "surprise": 1}, "INVALID_REQUEST"),
    ("router_call", {"prompt": "hi", "provider": "host"}, "INVALID_REQUEST"),
    ("router_call", {"prompt": "hi", "model": "claude-opus-4-1", "max_cost_usd": 0}, "BUDGET_EXCEEDED"),
    ("router_ask_many", {"prompt": "hi", "models": ["openai:gpt-4.1", "mistral:mistral-large"]}, "OPENAI_CONFIG_ERROR"),
    ("router_ask_many", {"prompt": "hi", "models": ["kimi"]}, "INVALID_REQUEST"),
    ("router_models", {}, None),
    ("router_models", {"live": "sometimes"}, "INVALID_REQUEST"),
    ("router_threads", {}, None),
    ("router_threads", {"action": "get", "thread_id": "no-such-thread"}, "INVALID_REQUEST"),
    ("router_usage", {}, None),
    ("router_usage", {"since": "yesterday"}, "INVALID_REQUEST"),
    ("router_run", {"scenario": SCENARIO}, None),
    ("router_run", {"scenario": {"colibri": 1}}, "INVALID_REQUEST"),
    ("router_job", {}, None),
    ("router_job", {"job_id": "job_unknown"}, "JOB_NOT_FOUND"),
    ("router_job", {"wait_s": 90}, "INVALID_REQUEST"),
]


def _script(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("hello"), *[RATE_LIMITED] * 4, kimi_text("hello"))


async def _call_all(session: ClientSession) -> list[str]:
    """Every call of :data:`CALLS`, each result checked against its tool's listed output schema;
    returns the error codes met."""
    schemas = {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}
    met = []
    for tool, arguments, expected in CALLS:
        result = await session.call_tool(tool, arguments)
        structured = result.structured_content
        assert structured is not None, (tool, arguments)
        schema = schemas[tool]
        assert schema is not None, tool
        problems = [problem.message for problem in Draft202012Validator(schema).iter_errors(structured)]
        assert problems == [], (tool, arguments, problems)
        assert result.is_error == (expected is not None), (tool, arguments, result.content[0].text)  # type: ignore[union-attr]
        if expected is not None:
            assert structured["error"]["code"] == expected, (tool, arguments, structured)
            met.append(expected)
    return met


async def test_every_result_over_stdio_conforms(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    _script(fake_upstream)
    async with router_session(server_env, server_log) as session:
        met = await _call_all(session)
    assert len(met) == sum(expected is not None for _, _, expected in CALLS)


async def test_every_result_over_http_conforms(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, tmp_path: Path
) -> None:
    _script(fake_upstream)
    tokens = tmp_path / "tokens"
    server_env["COLIBRI_HTTP_TOKENS_FILE"] = str(tokens)
    token = tokens_for(tokens, "alice")["alice"]
    with http_server(server_env, server_log) as url:
        async with http_session(url, token) as session:
            met = await _call_all(session)
            # Over HTTP a scenario file on the server's disk is refused: one more error kind.
            refused = await session.call_tool("router_run", {"scenario_path": "/etc/hostname"})
    assert refused.is_error and (refused.structured_content or {})["error"]["code"] == "INVALID_REQUEST"
    assert len(met) == sum(expected is not None for _, _, expected in CALLS)


def test_the_typescript_client_accepts_every_result(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, tmp_path: Path
) -> None:
    from agent_clis import agent_bin_dir

    node_modules = agent_bin_dir().parent  # skips, saying why, where Node is missing
    if not (node_modules / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        pytest.skip(f"@modelcontextprotocol/sdk is not installed in {node_modules}: npm ci --prefix tests/agent-clis")
    _script(fake_upstream)
    plan = tmp_path / "plan.json"
    calls = [{"tool": tool, "arguments": arguments} for tool, arguments, _ in CALLS]
    plan.write_text(json.dumps({"command": SERVER_COMMAND, "calls": calls}))
    driver = Path(__file__).with_name("ts_client.mjs")
    with server_log.open("a") as stderr:
        done = subprocess.run(
            ["node", str(driver), str(node_modules), str(plan)],
            env=server_env | {"PATH": server_env["PATH"]},
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, server_log.read_text()[-3000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer["tool"] for answer in answers] == [tool for tool, _, _ in CALLS]
    for answer, (tool, arguments, expected) in zip(answers, CALLS, strict=True):
        assert "rejected" not in answer, (tool, arguments, answer)  # e.g. -32602 Structured content does not match
        assert answer["isError"] == (expected is not None), (tool, arguments, answer)
        assert answer["code"] == expected, (tool, arguments, answer)
        if expected is not None:
            assert answer["text"].startswith(f"{expected}: "), answer
