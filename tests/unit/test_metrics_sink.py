"""The metrics sink in-process: budget scopes, cancelled calls, bounded labels, and who may read /metrics."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from colibri_router import observability
from colibri_router import store as store_module
from colibri_router.call.service import serve
from colibri_router.errors import ColibriError
from colibri_router.observability.labels import model_label, provider_label
from colibri_router.observability.metrics import Metrics
from colibri_router.schema import RouterCallInput
from colibri_router.server.http import HttpOptions, build_app, plan
from colibri_router.settings import load_settings
from colibri_router.tokens import add_token

CLAUDE_KEY = "sk-ant-unit-secret-123456"


@pytest.fixture
def metrics(monkeypatch: pytest.MonkeyPatch) -> Iterator[Metrics]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", CLAUDE_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://claude.test")
    monkeypatch.setattr(store_module, "_shared", {})
    sink = Metrics()
    observability.install(sink)
    yield sink
    observability.uninstall(sink)


def found(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for sample in family.samples
    }


def reply(request: httpx.Request) -> httpx.Response:
    model = json.loads(request.content)["model"]
    if model != "claude-sonnet-4-5":
        return httpx.Response(404, json={"type": "error", "error": {"type": "not_found_error", "message": "model"}})
    body = {
        "type": "message",
        "model": model,
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 40},
    }
    return httpx.Response(200, json=body)


async def call(principal: str, **args: object) -> None:
    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as client:
        await serve(RouterCallInput.model_validate(args), principal=principal, client=client)


async def test_a_budget_refusal_counts_under_its_scope_and_a_model_nobody_knows_is_other(
    metrics: Metrics, monkeypatch: pytest.MonkeyPatch
) -> None:
    await call("alice", prompt="hi", model="claude-sonnet-4-5")
    with pytest.raises(ColibriError):
        await call("alice", prompt="hi", model="claude-invented-by-a-caller-sk-123")
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD_PER_USER", "0.0000001")
    with pytest.raises(ColibriError, match="budget"):
        await call("alice", prompt="hi", model="claude-sonnet-4-5")
    seen = found(metrics)
    calls = {
        dict(labels)["kind"]: (dict(labels)["model"], n)
        for (name, labels), n in seen.items()
        if name == "colibri_router_calls_total"
    }
    assert calls == {
        "ok": ("claude-sonnet-4-5", 1),
        "MODEL_NOT_FOUND": ("other", 1),
        "BUDGET_EXCEEDED": ("claude-sonnet-4-5", 1),
    }
    refusals = {labels: n for (name, labels), n in seen.items() if name == "colibri_router_budget_refusals_total"}
    assert refusals == {frozenset({"caller": "alice", "scope": "daily_per_principal"}.items()): 1}
    cached = (
        "colibri_router_tokens_total",
        frozenset({"provider": "claude", "model": "claude-sonnet-4-5", "caller": "alice", "type": "cached"}.items()),
    )
    assert seen[cached] == 40


async def test_a_cancelled_call_counts_as_cancelled_and_leaves_nothing_in_flight(metrics: Metrics) -> None:
    started = anyio.Event()

    async def slow(_request: httpx.Request) -> httpx.Response:
        started.set()
        await anyio.sleep(30)
        raise AssertionError("not reached")

    async def run() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(slow)) as client:
            await serve(
                RouterCallInput.model_validate({"prompt": "hi", "model": "claude-sonnet-4-5"}),
                principal="bob",
                client=client,
            )

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await started.wait()
        assert metrics.in_flight._value.get() == 1
        group.cancel_scope.cancel()
    seen = found(metrics)
    assert seen[("colibri_router_calls_in_flight", frozenset())] == 0
    kinds = {dict(labels)["kind"] for (name, labels) in seen if name == "colibri_router_calls_total"}
    assert kinds == {"CANCELLED"}


def test_labels_take_only_registry_names_and_known_models() -> None:
    assert provider_label("kimi") == "kimi"
    assert provider_label("sk-not-a-provider") == "other"
    assert provider_label(None) == "other"
    assert (
        model_label("claude", "claude-sonnet-4-5-20250929") == "claude-sonnet-4-5-20250929"
    )  # the price data matches it
    assert model_label("claude", "anything a caller sends") == "other"
    assert model_label("nobody", "claude-sonnet-4-5") == "other"


@pytest.mark.parametrize(("public", "status"), [(None, 401), ("1", 200), ("true", 200), ("0", 401)])
async def test_metrics_need_a_token_unless_public(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, public: str | None, status: int
) -> None:
    token = add_token(tmp_path / "tokens", "alice")
    monkeypatch.setenv("COLIBRI_HTTP_TOKENS_FILE", str(tmp_path / "tokens"))
    if public is not None:
        monkeypatch.setenv("COLIBRI_METRICS_PUBLIC", public)
    options = HttpOptions()
    app = build_app(options, plan(options, load_settings()))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000") as client:
        assert (await client.get("/metrics")).status_code == status
        with_token = await client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert with_token.status_code == 200
    assert "colibri_router_calls_in_flight" in with_token.text


async def test_each_model_of_router_ask_many_counts_as_a_call(metrics: Metrics) -> None:
    from colibri_router.ask_many.schema import RouterAskManyInput
    from colibri_router.ask_many.service import ask_many

    arguments = RouterAskManyInput.model_validate({"prompt": "hi", "models": ["claude-sonnet-4-5", "claude-opus-4-1"]})
    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as client:
        await ask_many(arguments, principal="bob", client=client)
    calls = {
        (dict(labels)["model"], dict(labels)["kind"]): n
        for (name, labels), n in found(metrics).items()
        if name == "colibri_router_calls_total" and dict(labels)["caller"] == "bob"
    }
    assert calls == {("claude-sonnet-4-5", "ok"): 1, ("claude-opus-4-1", "MODEL_NOT_FOUND"): 1}
