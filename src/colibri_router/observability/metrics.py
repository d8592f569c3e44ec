"""Prometheus metrics of ``serve --http`` (``GET /metrics``), with the official client library.

Metrics (every label bounded, see :mod:`.labels`; ``kind`` is ``ok`` for a success)::

    colibri_router_calls_total{provider,model,caller,kind}        router_call calls by outcome
    colibri_router_call_duration_seconds{provider,model}          a call's time, fallbacks included
    colibri_router_time_to_first_token_seconds{provider,model}    streamed calls: time to the first token
    colibri_router_tokens_total{provider,model,caller,type}       type: input, output, cached, cache_write,
                                                                  reasoning (cached counts in input too)
    colibri_router_cost_usd_total{provider,model,caller}          priced calls' cost
    colibri_router_retries_total{provider,model,kind}             upstream requests tried again
    colibri_router_fallbacks_total{provider,model,kind}           models given up for the next fallback
    colibri_router_key_set_asides_total{provider,key,reason}      pool keys set aside (key: its fingerprint;
                                                                  reason: rate_limited, out_of_quota, invalid)
    colibri_router_calls_in_flight                                router_calls running now
    colibri_router_budget_refusals_total{caller,scope}            calls refused by a budget (scope: daily,
                                                                  monthly, daily_per_principal) or by
                                                                  their max_cost_usd (scope: call)

A failed call is counted with the provider and model it last tried (``other`` before any was chosen).
Histograms' buckets run from 50 ms to 300 s (the default deadline).

Several worker processes (``--workers N``): with ``PROMETHEUS_MULTIPROC_DIR`` set (``serve --http``
sets it to a fresh directory of its own when it starts several workers), each process writes its
values there and every ``/metrics`` answer sums all of them, as prometheus-client's multiprocess mode
does; ``calls_in_flight`` counts the live processes' calls only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess as prometheus_multiprocess

from colibri_router.errors import ColibriError
from colibri_router.observability import CallFacts, RoutedCall, Sink
from colibri_router.observability.labels import kind_label, labels
from colibri_router.providers import load_registry
from colibri_router.schema import RouterCallResult
from colibri_router.store import BudgetExceeded

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_TOKEN_TYPES = ("input", "output", "cached", "cache_write", "reasoning")


class Metrics(Sink):
    """The metrics of one process, in a registry of their own (never prometheus-client's global one)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        model = ["provider", "model"]
        metric: dict[str, Any] = {"registry": self.registry, "namespace": "colibri_router"}
        self.calls = Counter(
            "calls", "router_call calls by outcome kind (ok for a success).", [*model, "caller", "kind"], **metric
        )
        self.duration = Histogram(
            "call_duration_seconds", "Time of a router_call, fallbacks included.", model, buckets=BUCKETS_S, **metric
        )
        self.ttft = Histogram(
            "time_to_first_token_seconds", "Time to the answer's first token.", model, buckets=BUCKETS_S, **metric
        )
        self.tokens = Counter(
            "tokens", "Tokens by type (cached, cache_write count in input too).", [*model, "caller", "type"], **metric
        )
        self.cost = Counter("cost_usd", "Cost of priced calls in US dollars.", [*model, "caller"], **metric)
        self.retries = Counter(
            "retries", "Upstream requests tried again, by the failure's kind.", [*model, "kind"], **metric
        )
        self.fallbacks = Counter(
            "fallbacks", "Models given up for the next fallback, by the failure's kind.", [*model, "kind"], **metric
        )
        self.key_set_asides = Counter(
            "key_set_asides", "Pool keys set aside, by fingerprint and reason.", ["provider", "key", "reason"], **metric
        )
        self.in_flight = Gauge(
            "calls_in_flight", "router_call calls running now.", multiprocess_mode="livesum", **metric
        )
        self.budget_refusals = Counter(
            "budget_refusals", "Calls refused by a budget or their max_cost_usd.", ["caller", "scope"], **metric
        )

    @staticmethod
    def process_ended() -> None:
        """In multiprocess mode, drop this process's in-flight gauge (a worker that shut down runs
        nothing); a worker that crashed leaves its last value until the server restarts."""
        if os.environ.get(MULTIPROCESS_VARIABLE):
            prometheus_multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]

    def exposition(self) -> bytes:
        """The text format of every metric: this process's, or all processes' in multiprocess mode."""
        directory = os.environ.get(MULTIPROCESS_VARIABLE)
        if not directory:
            return generate_latest(self.registry)
        collected = CollectorRegistry()
        prometheus_multiprocess.MultiProcessCollector(collected, path=directory)  # type: ignore[no-untyped-call]
        return generate_latest(collected)

    def routed_call(self, call: CallFacts) -> RoutedCall:
        self.in_flight.inc()
        return _CallMetrics(self, call)

    def key_set_aside(self, provider: str, key: str, reason: str) -> None:
        # Bounded: a provider's keys are the operator's few, named by fingerprint (never the key).
        self.key_set_asides.labels(provider, key, reason).inc()

    def retried(self, provider: str, model: str, kind: str) -> None:
        self.retries.labels(*labels(load_registry(), provider, model), kind_label(kind)).inc()


class _CallMetrics(RoutedCall):
    __slots__ = ("_call", "_metrics")

    def __init__(self, metrics: Metrics, call: CallFacts) -> None:
        self._metrics = metrics
        self._call = call

    def finished(self, result: RouterCallResult | None, error: ColibriError | None) -> None:
        metrics, call = self._metrics, self._call
        metrics.in_flight.dec()
        registry = load_registry()
        attempts = [_fields(a) for a in (result.attempts if result is not None else error.attempts if error else ())]
        for tried in attempts[:-1]:  # each one before the last failed, and the next model was tried
            metrics.fallbacks.labels(
                *labels(registry, tried["provider"], tried["model"]), kind_label(tried["kind"])
            ).inc()
        provider: str | None
        model: str | None
        if result is not None:
            provider, model, kind = result.provider, attempts[-1]["model"] if attempts else result.model, "ok"
        else:
            last = attempts[-1] if attempts else {}
            provider = (error.provider if error else None) or last.get("provider") or call.args.provider
            model = (error.model if error else None) or last.get("model") or call.args.model
            kind = error.kind if error is not None else "CANCELLED"
        pair = labels(registry, provider, model)
        caller = call.caller
        metrics.calls.labels(*pair, caller, kind_label(kind)).inc()
        metrics.duration.labels(*pair).observe(call.elapsed_s())
        if error is not None and error.kind == "BUDGET_EXCEEDED":
            scope = error.scope if isinstance(error, BudgetExceeded) else "call"
            metrics.budget_refusals.labels(caller, scope).inc()
        if result is None:
            return
        if result.ttft_ms is not None:
            metrics.ttft.labels(*pair).observe(result.ttft_ms / 1000)
        counts = (
            result.prompt_tokens,
            result.completion_tokens,
            result.cached_tokens,
            result.cache_write_tokens,
            result.reasoning_tokens,
        )
        for token_type, count in zip(_TOKEN_TYPES, counts, strict=True):
            if count:
                metrics.tokens.labels(*pair, caller, token_type).inc(count)
        if result.cost_usd:
            metrics.cost.labels(*pair, caller).inc(result.cost_usd)


def _fields(attempt: Any) -> Mapping[str, Any]:
    """An attempt entry as a mapping: results hold models, errors hold their dumps."""
    return attempt if isinstance(attempt, Mapping) else attempt.model_dump()
