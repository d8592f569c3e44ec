"""End to end over stdio with the official MCP client (issue 35): router_call with a response_schema
returns `parsed` on every wire family; an answer that never matches is an INVALID_OUTPUT error result
(retryable, the raw text in its details) that conforms to the tool's output schema; router_models shows
each provider's form; `colibri-router call --schema FILE.json` prints `parsed`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_text,
    cohere_text,
    gemini_text,
    kimi_text,
    ollama_text,
    openai_text,
)
from harness import SERVER_COMMAND, every_provider_env, router_session

pytestmark = pytest.mark.e2e

SCHEMA = {
    "type": "object",
    "properties": {"category": {"enum": ["billing", "bug", "other"]}, "urgent": {"type": "boolean"}},
    "required": ["category"],
}
PROMPT = "Classify: 'refund not received'"


def env(fake: FakeUpstream) -> dict[str, str]:
    return {
        **every_provider_env(fake),
        "GEMINI_API_KEY": "gemini-e2e-secret-0123456789",
        "GEMINI_BASE_URL": fake.base_url("gemini"),
        "CO_API_KEY": "cohere-e2e-secret-0123456789",
        "COHERE_BASE_URL": fake.base_url("cohere"),
        "OLLAMA_HOST": fake.base_url("ollama"),
    }


async def test_parsed_on_every_wire_family_and_invalid_output_as_an_error_result(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    answer = '{"category": "billing"}'
    cases: list[tuple[str, str, Any]] = [
        ("kimi", "kimi-k2.6", kimi_text(answer)),
        ("anthropic", "claude-sonnet-4-5", anthropic_text(answer)),
        ("openai", "gpt-4.1", openai_text(answer, model="gpt-4.1")),
        ("gemini", "gemini-3.5-flash", gemini_text(answer)),
        ("cohere", "command-a-03-2025", cohere_text(answer)),
        ("ollama", "ollama:qwen3", ollama_text(answer)),
    ]
    for route, _, reply in cases:
        fake_upstream.route(route).enqueue(reply)
    fake_upstream.route("openai").enqueue(openai_text("no", model="gpt-4.1"), openai_text("still no", model="gpt-4.1"))
    async with router_session(env(fake_upstream), server_log) as session:
        for _, model, _ in cases:
            result = await session.call_tool(
                "router_call", {"prompt": PROMPT, "model": model, "response_schema": SCHEMA}
            )
            assert not result.is_error, result.content
            structured = result.structured_content
            assert structured is not None and structured["parsed"] == {"category": "billing"}, model
            assert json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
        failed = await session.call_tool(
            "router_call", {"prompt": PROMPT, "model": "gpt-4.1", "response_schema": SCHEMA}
        )
        models = await session.call_tool("router_models", {})
    assert fake_upstream.violations == []
    assert failed.is_error and failed.structured_content is not None
    error = failed.structured_content["error"]
    assert (error["code"], error["kind"], error["retryable"]) == ("INVALID_OUTPUT", "INVALID_OUTPUT", True)
    assert "$: the answer is not JSON" in error["message"] and error["details"] == {"raw": "still no"}
    assert models.structured_content is not None
    forms = {p["name"]: p["structured_output"] for p in models.structured_content["providers"]}
    assert forms["openai"] == "native strict schema" and forms["deepseek"] == "JSON mode + schema in the prompt"


def test_call_with_a_schema_file_prints_parsed(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    schema_file = tmp_path / "ticket.json"
    schema_file.write_text(json.dumps(SCHEMA))
    fake_upstream.route("openai").enqueue(openai_text('{"category": "bug", "urgent": true}', model="gpt-4.1"))
    done = subprocess.run(
        [SERVER_COMMAND, "call", "--model", "gpt-4.1", "--schema", str(schema_file), PROMPT],
        check=False,
        env=env(fake_upstream),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["parsed"] == {"category": "bug", "urgent": True}
    missing = subprocess.run(
        [SERVER_COMMAND, "call", "--schema", str(tmp_path / "nope.json"), PROMPT],
        check=False,
        env=env(fake_upstream),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1 and "--schema" in json.loads(missing.stdout)["error"]["message"]
