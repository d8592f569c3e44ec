"""``GET /metrics`` of the real ``serve --http`` process after a known sequence of calls (a success, a
429 that ends in a fallback, a refusal by max_cost_usd), read with prometheus-client's own parser."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from fake_upstream import CLAUDE_MODEL, KIMI_MODEL, FakeUpstream, error, kimi_text
from harness import ANTHROPIC_KEY, KIMI_KEY
from http_harness import http_server, http_session, tokens_for
from prometheus_client.parser import text_string_to_metric_families

from colibri_router.pricing import TokenCounts, price_call
from colibri_router.providers import BUILTIN

pytestmark = pytest.mark.e2e

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


def cost(input_tokens: int, output_tokens: int) -> float:
    price = price_call(
        BUILTIN["kimi"].price_provider, KIMI_MODEL, TokenCounts(input_tokens=input_tokens, output_tokens=output_tokens)
    )
    assert price.cost_usd is not None
    return price.cost_usd


async def test_metrics_count_a_known_sequence_of_calls_exactly(
    fake_upstream: FakeUpstream, server_env: dict[str, str], tmp_path: Path
) -> None:
    server_env["COLIBRI_HTTP_TOKENS_FILE"] = str(tmp_path / "tokens")
    tokens = tokens_for(tmp_path / "tokens", "alice", "ops")
    fake_upstream.kimi.enqueue(kimi_text("one", usage=(20, 10)), kimi_text("two", usage=(30, 5)))
    fake_upstream.anthropic.enqueue(*[error(429, message="slow down", error_type="rate_limit_error")] * 4)
    with http_server(server_env, tmp_path / "server.log") as url:
        async with http_session(url, tokens["alice"]) as session:
            first = await session.call_tool("router_call", {"prompt": "hi", "model": KIMI_MODEL})
            fell_back = await session.call_tool(
                "router_call", {"prompt": "hi", "model": CLAUDE_MODEL, "fallback": [KIMI_MODEL]}
            )
            refused = await session.call_tool(
                "router_call", {"prompt": "hi", "model": KIMI_MODEL, "max_cost_usd": 0.000000001}
            )
        metrics_url = url.replace("/mcp", "/metrics")
        async with httpx.AsyncClient() as client:
            denied = await client.get(metrics_url)
            wrong = await client.get(metrics_url, headers={"Authorization": "Bearer not-a-token"})
            answer = await client.get(metrics_url, headers={"Authorization": f"Bearer {tokens['ops']}"})
    assert not first.is_error and not fell_back.is_error
    assert (fell_back.structured_content or {})["provider"] == "kimi"
    assert refused.is_error and (refused.structured_content or {})["error"]["kind"] == "BUDGET_EXCEEDED"
    assert denied.status_code == wrong.status_code == 401
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    found = samples(answer.text)

    kimi = {"provider": "kimi", "model": KIMI_MODEL}
    claude = {"provider": "claude", "model": CLAUDE_MODEL}
    calls = {labels: count for (name, labels), count in found.items() if name == "colibri_router_calls_total"}
    assert calls == {
        frozenset({**kimi, "caller": "alice", "kind": "ok"}.items()): 2,
        frozenset({**kimi, "caller": "alice", "kind": "BUDGET_EXCEEDED"}.items()): 1,
    }
    assert value(found, "colibri_router_retries_total", **claude, kind="RATE_LIMITED") == 3
    assert value(found, "colibri_router_fallbacks_total", **claude, kind="RATE_LIMITED") == 1
    assert value(found, "colibri_router_budget_refusals_total", caller="alice", scope="call") == 1
    assert value(found, "colibri_router_calls_in_flight") == 0
    assert value(found, "colibri_router_tokens_total", **kimi, caller="alice", type="input") == 50
    assert value(found, "colibri_router_tokens_total", **kimi, caller="alice", type="output") == 15
    assert value(found, "colibri_router_cost_usd_total", **kimi, caller="alice") == pytest.approx(
        cost(20, 10) + cost(30, 5), rel=1e-9
    )
    assert value(found, "colibri_router_call_duration_seconds_count", **kimi) == 3
    assert value(found, "colibri_router_time_to_first_token_seconds_count", **kimi) == 2
    buckets = sorted(
        float(dict(labels)["le"])
        for (name, labels) in found
        if name == "colibri_router_call_duration_seconds_bucket" and dict(labels)["provider"] == "kimi"
    )
    assert buckets[0] == 0.05 and buckets[-2] == 300.0  # then +Inf
    secrets = (KIMI_KEY, ANTHROPIC_KEY, *tokens.values())
    labels_seen = {label for (_, labels) in found for pair in labels for label in pair}
    assert not [label for label in labels_seen if any(secret in label for secret in secrets)]
    assert not any(secret in answer.text for secret in secrets)


async def test_with_two_workers_metrics_sum_every_workers_calls(
    fake_upstream: FakeUpstream, server_env: dict[str, str], tmp_path: Path
) -> None:
    calls = 12
    fake_upstream.kimi.enqueue(*[kimi_text("ok", delay_s=0.5) for _ in range(calls)])

    async def one(url: str) -> None:
        async with http_session(url) as session:
            assert not (await session.call_tool("router_call", {"prompt": "hi", "model": KIMI_MODEL})).is_error

    with http_server(server_env, tmp_path / "server.log", "--workers", "2") as url:
        # Concurrent sessions, each on connections of its own: the workers share them.
        async with anyio.create_task_group() as group:
            for _ in range(calls):
                group.start_soon(one, url)
        async with httpx.AsyncClient() as client:
            answers = [(await client.get(url.replace("/mcp", "/metrics"))).text for _ in range(10)]
    for answer in answers:  # whichever worker answers, it counts both workers' calls
        found = samples(answer)
        kimi = {"provider": "kimi", "model": KIMI_MODEL}
        assert value(found, "colibri_router_calls_total", **kimi, caller=_local_caller(found), kind="ok") == calls
        assert value(found, "colibri_router_calls_in_flight") == 0


def _local_caller(found: Samples) -> str:
    """Without tokens the caller is the local user: read it from the one calls series."""
    [caller] = {dict(labels)["caller"] for (name, labels) in found if name == "colibri_router_calls_total"}
    return caller
