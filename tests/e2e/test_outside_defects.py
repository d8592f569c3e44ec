"""End to end over stdio: the defects found from outside (issue 21 §5), each through the real process
against the strict fake: a gateway's 504, a Cohere stream that ran out of time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, cohere_text, error
from harness import every_provider_env, router_session

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
