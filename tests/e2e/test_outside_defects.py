"""End to end over stdio: the defects found from outside (issue 21 §5), each through the real process
against the strict fake: a gateway's 504, a Cohere stream that ran out of time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, cohere_text, error
from harness import SERVER_COMMAND, every_provider_env, router_session
from http_harness import free_port

pytestmark = pytest.mark.e2e


def cohere_env(fake: FakeUpstream) -> dict[str, str]:
    return {
        **every_provider_env(fake),
        "CO_API_KEY": "cohere-e2e-secret-0123456789",
        "COHERE_BASE_URL": fake.base_url("cohere"),
    }


async def error_of(env: dict[str, str], server_log: Path, **args: Any) -> dict[str, Any]:
    async with router_session(env, server_log) as session:
        result = await session.call_tool("router_call", {"prompt": "hi", **args})
    assert result.is_error
    structured = result.structured_content or {}
    return dict(structured["error"])


async def test_a_cohere_stream_ending_with_finish_timeout_is_a_retryable_timeout(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    fake_upstream.route("cohere").enqueue(*[cohere_text("partial", finish_reason="TIMEOUT")] * 4)

    failure = await error_of(cohere_env(fake_upstream), server_log, model="cohere:command-a-03-2025")

    assert fake_upstream.violations == []
    assert (failure["kind"], failure["retryable"], failure["provider"]) == ("TIMEOUT", True, "cohere")


@pytest.mark.parametrize(
    ("route", "model", "error_type"),
    [("anthropic", "claude-sonnet-4-5", "api_error"), ("openai", "gpt-4.1", "server_error")],
)
async def test_an_upstream_504_with_a_generic_type_is_a_timeout(
    fake_upstream: FakeUpstream, server_log: Path, route: str, model: str, error_type: str
) -> None:
    reply = error(504, message="Internal server error", error_type=error_type, headers={"Retry-After": "0"})
    fake_upstream.route(route).enqueue(*[reply] * 4)

    failure = await error_of(every_provider_env(fake_upstream), server_log, model=model)

    assert (failure["kind"], failure["retryable"], failure["status"]) == ("TIMEOUT", True, 504)


async def test_router_models_shows_a_bare_alias_as_provider_and_model(
    fake_upstream: FakeUpstream, tmp_path: Path, server_log: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[aliases]\nmine = "kimi-k2-turbo-preview"\nwriter = "claude-sonnet-4-5"\n')
    env = {**every_provider_env(fake_upstream), "COLIBRI_CONFIG": str(config)}
    async with router_session(env, server_log) as session:
        listing = (await session.call_tool("router_models", {})).structured_content or {}
        only_kimi = (await session.call_tool("router_models", {"provider": "kimi"})).structured_content or {}

    assert listing["aliases"]["mine"] == "kimi:kimi-k2-turbo-preview"
    assert listing["aliases"]["writer"] == "claude:claude-sonnet-4-5"
    assert all(":" in target for target in listing["aliases"].values())
    assert "mine" in only_kimi["aliases"] and "writer" not in only_kimi["aliases"]


async def test_every_tool_answers_arguments_failing_its_schema_with_invalid_request(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    bad = {
        "router_call": {"prompt": "hi", "surprise": 1},
        "router_models": {"live": "maybe"},
        "router_threads": {"action": "zap"},
        "router_usage": {"since": 3},
        "router_run": {"scenario": 4},
    }
    async with router_session(every_provider_env(fake_upstream), server_log) as session:
        results = {tool: await session.call_tool(tool, arguments) for tool, arguments in bad.items()}
        still = await session.call_tool("router_models", {"provider": "kimi"})

    for tool, result in results.items():
        assert result.is_error, tool
        text = result.content[0].text  # type: ignore[union-attr]
        first, second = text.split("\n")
        assert first.startswith("INVALID_REQUEST: "), text
        assert "pydantic" not in text and "Error executing tool" not in text
        assert (result.structured_content or {})["error"]["code"] == "INVALID_REQUEST"
        assert json.loads(second) == result.structured_content
    assert (
        results["router_call"]
        .content[0]
        .text.startswith(  # type: ignore[union-attr]
            "INVALID_REQUEST: surprise: Extra inputs are not permitted\n"
        )
    )
    assert not still.is_error


# Makes asyncpg unimportable, as on an install without the `postgres` extra: the path finder no longer
# sees it, so `import asyncpg` fails and `importlib.util.find_spec("asyncpg")` is None, as when absent.
WITHOUT_ASYNCPG = """\
import sys
from importlib.machinery import PathFinder


class _WithoutAsyncpg(PathFinder):
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname == "asyncpg" or fullname.startswith("asyncpg."):
            return None
        return super().find_spec(fullname, path, target)


sys.meta_path[:] = [_WithoutAsyncpg if finder is PathFinder else finder for finder in sys.meta_path]
"""


def test_serve_http_refuses_a_postgresql_url_without_asyncpg_before_serving(
    fake_upstream: FakeUpstream, tmp_path: Path
) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(WITHOUT_ASYNCPG)
    env = {
        **every_provider_env(fake_upstream),
        "PYTHONPATH": str(shim),
        "COLIBRI_DATABASE_URL": "postgresql://colibri:secret-pw@127.0.0.1:9/colibri",
    }
    probe = subprocess.run(
        [sys.executable, "-c", "import asyncpg"], env=env, check=False, capture_output=True, text=True, timeout=60
    )
    assert probe.returncode == 1 and "No module named 'asyncpg'" in probe.stderr  # the shim works

    refused = subprocess.run(
        [SERVER_COMMAND, "serve", "--http", "--port", str(free_port())],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert refused.returncode == 2, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert lines[-1] == (
        "colibri-router serve: COLIBRI_DATABASE_URL names a PostgreSQL database, which needs asyncpg: "
        "pip install 'colibri-router[postgres]'"
    )
    assert "Traceback" not in refused.stderr and "Uvicorn running" not in refused.stderr
    assert "secret-pw" not in refused.stderr
