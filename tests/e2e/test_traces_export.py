"""Traces from the real process to a loopback OTLP/HTTP collector: over HTTP the client's
``traceparent`` header is continued; over stdio the spans arrive as well. No key in any span."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fake_upstream import KIMI_MODEL, FakeUpstream, kimi_text
from harness import KIMI_KEY, router_session
from http_harness import MCP_HEADERS, http_server, tools_call
from otlp_receiver import otlp_collector

pytestmark = pytest.mark.e2e

TRACE_ID, PARENT_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def traced(env: dict[str, str], endpoint: str) -> dict[str, str]:
    return {
        **env,
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "50",  # export within 50 ms, not the default 5 s
        "OTEL_SERVICE_NAME": "router-under-test",
    }


async def test_over_http_the_clients_traceparent_is_continued(
    fake_upstream: FakeUpstream, server_env: dict[str, str], tmp_path: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("traced", usage=(12, 3)))
    headers = {**MCP_HEADERS, "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
    call = tools_call(1, {"prompt": "hi", "model": KIMI_MODEL})
    with otlp_collector() as (endpoint, collector), http_server(traced(server_env, endpoint), tmp_path / "l") as url:
        async with httpx.AsyncClient(timeout=30) as client:
            answer = await client.post(url, json=call, headers=headers)
        assert answer.status_code == 200 and '"traced"' in answer.text
        [tool] = collector.wait_for("tools/call router_call")
        [attempt] = collector.wait_for(f"chat {KIMI_MODEL}")
    assert (tool.trace_id, tool.parent_span_id) == (TRACE_ID, PARENT_ID)
    assert (attempt.trace_id, attempt.parent_span_id) == (TRACE_ID, tool.span_id)
    assert tool.service == "router-under-test"
    assert tool.attributes["gen_ai.provider.name"] == "kimi"
    assert tool.attributes["gen_ai.usage.input_tokens"] == 12
    assert attempt.attributes["gen_ai.response.model"] == KIMI_MODEL
    assert not any(KIMI_KEY.encode() in body for body in collector.raw)


async def test_over_stdio_spans_reach_the_collector(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("traced"))
    with otlp_collector() as (endpoint, collector):
        async with router_session(traced(server_env, endpoint), server_log) as session:
            result = await session.call_tool("router_call", {"prompt": "hi", "model": KIMI_MODEL})
            assert not result.is_error
            [tool] = collector.wait_for("tools/call router_call")
            [attempt] = collector.wait_for(f"chat {KIMI_MODEL}")
    assert attempt.parent_span_id == tool.span_id
    assert tool.attributes["gen_ai.response.model"] == KIMI_MODEL
    assert not any(KIMI_KEY.encode() in body for body in collector.raw)
