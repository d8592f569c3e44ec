"""Pool keys in what the operator's tools see (docs/keys.md): /metrics labels and trace spans name keys by
fingerprint, and neither they nor the tool results a host reads hold any key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fake_upstream import FakeUpstream, error
from mcp import Client
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from colibri_router import observability
from colibri_router.engine.keys import fingerprint
from colibri_router.observability.metrics import Metrics
from colibri_router.observability.traces import Traces
from colibri_router.server import build_server

pytestmark = pytest.mark.usefixtures("fresh_key_pools")  # a pool is per process: each test starts anew

KEYS = ("outputs-pool-key-one-8f2a", "outputs-pool-key-two-1c7e", "outputs-pool-key-three-5b0d")
K1, K2, K3 = KEYS


@pytest.fixture
def sinks(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Metrics, Any]]:
    monkeypatch.setenv("GEMINI_API_KEY", ",".join(KEYS))
    monkeypatch.setenv("GEMINI_BASE_URL", fake_upstream.base_url("gemini"))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    metrics, traces = Metrics(), Traces(provider)
    observability.install(metrics)
    observability.install(traces)
    yield metrics, exporter
    observability.uninstall(metrics)
    observability.uninstall(traces)


async def test_metrics_and_traces_name_keys_by_fingerprint_and_hold_none(
    fake_upstream: FakeUpstream, sinks: tuple[Metrics, Any]
) -> None:
    metrics, exporter = sinks
    fake_upstream.gemini.enqueue_for_key(K1, error(429, message=f"slow down {K1}", headers={"Retry-After": "20"}))
    fake_upstream.gemini.enqueue_for_key(K2, error(401, message=f"bad key {K2}"))
    fake_upstream.gemini.enqueue_for_key(K3, error(401, message=f"bad key {K3}"))

    async with Client(build_server()) as client:
        failed = await client.call_tool("router_call", {"prompt": "hi", "model": "gemini-3.5-flash", "timeout_s": 5})
        listing = await client.call_tool("router_models", {"provider": "gemini"})

    exposition = metrics.exposition().decode()
    spans = exporter.get_finished_spans()
    span_text = json.dumps([{**dict(s.attributes or {}), "name": s.name} for s in spans])
    results = json.dumps([failed.structured_content, listing.structured_content])
    for key in KEYS:
        assert key not in exposition + span_text + results
    fp = {key: fingerprint("gemini", key) for key in KEYS}
    assert f'colibri_router_key_set_asides_total{{key="{fp[K1]}",provider="gemini",reason="rate_limited"}} 1.0' in (
        exposition
    )
    assert f'key="{fp[K2]}",provider="gemini",reason="invalid"' in exposition
    assert [s.attributes.get("colibri_router.key") for s in spans if s.name.startswith("chat ")] == [  # type: ignore[union-attr]
        fp[K1],
        fp[K2],
        fp[K3],
    ]
    assert failed.structured_content is not None
    assert failed.structured_content["error"]["kind"] == "RATE_LIMITED"
    assert listing.structured_content is not None
    entry = listing.structured_content["providers"][0]
    assert (entry["keys"], entry["keys_usable"]) == (3, 0)
