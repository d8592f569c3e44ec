"""Trace spans through an in-memory exporter: one per tool call, a child per upstream request, the
GenAI attributes, a continued traceparent, no text unless asked, never a key. And start-up imports no
OpenTelemetry (nor prometheus-client) unless an OTLP endpoint is set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fake_upstream import KIMI_MODEL, FakeUpstream, error, kimi_text
from mcp import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from colibri_router import observability
from colibri_router.observability.traces import Traces
from colibri_router.server import build_server

KIMI_KEY = "sk-kimi-trace-secret-0123456789"
PROMPT = "the secret plan is marigold"


_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="session")
def global_provider() -> TracerProvider:
    """The process's tracer provider, set once (OpenTelemetry allows one): the MCP SDK opens its
    request spans through it, as it does in the server."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    return provider


@pytest.fixture
def spans(
    monkeypatch: pytest.MonkeyPatch, fake_upstream: FakeUpstream, global_provider: TracerProvider
) -> Iterator[InMemorySpanExporter]:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", KIMI_KEY)
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    _EXPORTER.clear()
    sink = Traces(global_provider)
    observability.install(sink)
    yield _EXPORTER
    observability.uninstall(sink)


async def router_call(arguments: dict[str, object]) -> object:
    async with Client(build_server()) as client:
        return await client.call_tool("router_call", arguments)


def by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    return named


def everything_in(spans: tuple[ReadableSpan, ...]) -> str:
    return json.dumps([(s.name, dict(s.attributes or {}), [e.name for e in s.events]) for s in spans], default=str)


async def test_a_tool_call_is_a_span_and_each_upstream_request_a_child_with_genai_attributes(
    spans: InMemorySpanExporter, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.kimi.enqueue(error(429, message="slow down"), kimi_text("marigold noted", usage=(20, 10)))
    await router_call({"prompt": PROMPT, "model": KIMI_MODEL})
    named = by_name(spans.get_finished_spans())
    [tool] = named["tools/call router_call"]  # the MCP SDK's span: ours adds to it
    first, second = named[f"chat {KIMI_MODEL}"]
    assert tool.kind is SpanKind.SERVER and first.kind is second.kind is SpanKind.CLIENT
    assert tool.parent is None
    for child in (first, second):
        assert child.parent is not None and child.parent.span_id == tool.context.span_id
        assert child.context.trace_id == tool.context.trace_id
    assert "execute_tool router_call" not in named  # one span for the tool call, not a second of ours
    attributes = dict(tool.attributes or {})
    assert attributes["colibri_router.caller"]
    assert {key: value for key, value in attributes.items() if key.startswith("gen_ai.")} == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "router_call",
        "gen_ai.request.model": KIMI_MODEL,
        "gen_ai.provider.name": "kimi",
        "gen_ai.response.model": KIMI_MODEL,
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 10,
    }
    assert dict(first.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "kimi",
        "gen_ai.request.model": KIMI_MODEL,
        "error.type": "RATE_LIMITED",
        "colibri_router.error.kind": "RATE_LIMITED",
        "colibri_router.error.code": "KIMI_API_ERROR",
    }
    assert first.status.status_code is StatusCode.ERROR
    assert (second.attributes or {})["gen_ai.response.model"] == KIMI_MODEL
    assert (second.attributes or {})["gen_ai.usage.output_tokens"] == 10
    assert "error.type" not in (second.attributes or {})
    text = everything_in(spans.get_finished_spans())
    assert KIMI_KEY not in text and "marigold" not in text  # no key; no text unless asked


async def test_a_failed_call_says_its_kind_on_the_tool_span(
    spans: InMemorySpanExporter, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.kimi.enqueue(error(401, message="Invalid Authentication"))
    await router_call({"prompt": "hi", "model": KIMI_MODEL})
    [tool] = by_name(spans.get_finished_spans())["tools/call router_call"]
    attributes = dict(tool.attributes or {})
    assert (attributes["colibri_router.error.kind"], attributes["colibri_router.error.code"]) == (
        "AUTH_FAILED",
        "KIMI_API_ERROR",
    )
    assert attributes["error.type"] == "tool_error"  # the MCP SDK's word for a failed tool call
    [attempt] = by_name(spans.get_finished_spans())[f"chat {KIMI_MODEL}"]
    assert (attempt.attributes or {})["error.type"] == "AUTH_FAILED"
    assert attributes["gen_ai.provider.name"] == "kimi"
    assert tool.status.status_code is StatusCode.ERROR


async def test_prompt_and_answer_text_only_with_colibri_otel_content(
    spans: InMemorySpanExporter, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_OTEL_CONTENT", "1")
    fake_upstream.kimi.enqueue(kimi_text("marigold noted"))
    await router_call({"prompt": PROMPT, "model": KIMI_MODEL, "system_prompt": "be brief"})
    [tool] = by_name(spans.get_finished_spans())["tools/call router_call"]
    attributes = dict(tool.attributes or {})
    assert json.loads(str(attributes["gen_ai.input.messages"])) == [
        {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
        {"role": "user", "parts": [{"type": "text", "content": PROMPT}]},
    ]
    assert json.loads(str(attributes["gen_ai.output.messages"])) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "marigold noted"}]}
    ]
    assert KIMI_KEY not in everything_in(spans.get_finished_spans())


def test_without_the_sdks_span_a_tool_call_gets_one_of_ours_continuing_a_traceparent(
    spans: InMemorySpanExporter,
) -> None:
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    [sink] = observability.installed()
    with sink.tool_call("router_models", "alice", {"traceparent": f"00-{trace_id}-{parent_id}-01"}):
        pass
    [span] = spans.get_finished_spans()
    assert span.name == "execute_tool router_models"
    assert f"{span.context.trace_id:032x}" == trace_id
    assert span.parent is not None and f"{span.parent.span_id:016x}" == parent_id


@pytest.mark.parametrize("endpoint", [None, "http://127.0.0.1:9"])
def test_start_up_imports_the_opentelemetry_sdk_only_when_an_endpoint_is_set(endpoint: str | None) -> None:
    # The MCP SDK imports the OpenTelemetry API itself (its spans are no-ops without a provider); the
    # SDK, the exporter and prometheus-client are ours to keep out.
    probe = (
        "import sys\n"
        "from colibri_router.observability import install_traces_if_configured\n"
        "from colibri_router.server import build_server\n"
        "install_traces_if_configured(); build_server()\n"
        "print(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules\n"
        "    if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter', 'prometheus_client'))}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    if endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    answer = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert answer.stdout.strip() == ("['opentelemetry.exporter', 'opentelemetry.sdk']" if endpoint else "[]")
