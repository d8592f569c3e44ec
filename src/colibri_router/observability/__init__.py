"""Where the router reports what it does to the operator's tools: Prometheus metrics (``serve --http``'s
``/metrics``, :mod:`.metrics`) and OpenTelemetry traces (opt-in with ``OTEL_EXPORTER_OTLP_ENDPOINT``,
:mod:`.traces`).

The router, the pipeline and the MCP shell call the hooks below; each hook hands the event to the
installed sinks. Nothing is installed by default (stdio without an OTLP endpoint), and then each hook
is one check of an empty tuple: neither prometheus-client nor OpenTelemetry is imported, so start-up
and the hot path pay nothing for them.

Events, in the order of one ``router_call``::

    tool_call(tool, caller, headers)        the MCP tool call (every tool): a span, the HTTP request's
                                            trace context continued
      routed_call(caller, args)             router_call's accounting: in flight, then finished(result
                                            or error): outcome, latency, tokens, cost, fallbacks
        attempt(provider, model, key)       one upstream request (each retry, each next key of a
                                            pool is another), ended with the decoded turn or the error;
                                            key: the pool key's fingerprint (None: a single key)
        key_set_aside(provider, key, reason)  a pool key set aside (docs/keys.md)
        retried(provider, model, kind)      a failed attempt is about to be tried again
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from colibri_router.logs import get_logger

if TYPE_CHECKING:
    from colibri_router.conversation import AssistantTurn
    from colibri_router.errors import ColibriError
    from colibri_router.schema import RouterCallInput, RouterCallResult

__all__ = [
    "Attempt",
    "RoutedCall",
    "Sink",
    "attempt",
    "install",
    "install_traces_if_configured",
    "installed",
    "key_set_aside",
    "retried",
    "routed_call",
    "tool_call",
    "tracing",
    "uninstall",
]


class Attempt:
    """One upstream request; :meth:`end` is called once, with the turn or the error (or neither: the
    request was cancelled). The base class ignores both."""

    __slots__ = ()

    def end(self, turn: AssistantTurn | None = None, error: BaseException | None = None) -> None:
        """The attempt is over."""


class RoutedCall:
    """One router_call's accounting, from admission to its result or error (neither: cancelled)."""

    __slots__ = ()

    def finished(self, result: RouterCallResult | None, error: ColibriError | None) -> None:
        """The call is over."""


class Sink:
    """What a metrics or traces backend implements (each method is a no-op here)."""

    def tool_call(self, tool: str, caller: str, headers: Mapping[str, str] | None) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def routed_call(self, call: CallFacts) -> RoutedCall:
        return _NO_CALL

    def attempt(self, provider: str, model: str, key: str | None = None) -> Attempt:
        return _NO_ATTEMPT

    def key_set_aside(self, provider: str, key: str, reason: str) -> None:
        return None

    def retried(self, provider: str, model: str, kind: str) -> None:
        return None


class CallFacts:
    """What every sink learns of one router_call: who asked, what, and since when."""

    __slots__ = ("args", "caller", "started")

    def __init__(self, caller: str, args: RouterCallInput) -> None:
        self.caller = caller
        self.args = args
        self.started = time.monotonic()

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


# Either standard variable turns tracing on (the second names the traces endpoint alone).
TRACES_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_traces_installed = False


def install_traces_if_configured() -> bool:
    """At a server's start-up: trace every tool call when an OTLP endpoint is set (and the SDK is not
    disabled with ``OTEL_SDK_DISABLED=true``). Only then is OpenTelemetry imported; without the
    ``otel`` extra the log says how to install it and the server runs untraced."""
    global _traces_installed  # noqa: PLW0603 - one tracer provider per process
    if _traces_installed or not any(os.environ.get(name) for name in TRACES_ENDPOINT_VARIABLES):
        return _traces_installed
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    try:
        from opentelemetry import trace

        # The tracing extra (OpenTelemetry), loaded only when tracing is configured.
        from colibri_router.observability.traces import Traces, tracer_provider_from_environment
    except ImportError:
        get_logger(__name__).warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed: tracing is off; "
            "install it with pip install 'colibri-router[otel]'"
        )
        return False
    provider = tracer_provider_from_environment()
    trace.set_tracer_provider(provider)
    install(Traces(provider))
    _traces_installed = True
    return True


def tracing() -> bool:
    """Whether traces are being exported (:func:`install_traces_if_configured` turned them on)."""
    return _traces_installed


_NO_ATTEMPT = Attempt()
_NO_CALL = RoutedCall()
_NOTHING = contextlib.nullcontext()
_sinks: tuple[Sink, ...] = ()


def install(sink: Sink) -> None:
    """Add ``sink`` (once: installing an equal sink again is a no-op)."""
    global _sinks  # noqa: PLW0603 - the process's sinks, set at start-up
    if sink not in _sinks:
        _sinks = (*_sinks, sink)


def uninstall(sink: Sink) -> None:
    global _sinks  # noqa: PLW0603
    _sinks = tuple(s for s in _sinks if s is not sink)


def installed() -> tuple[Sink, ...]:
    return _sinks


def tool_call(tool: str, caller: str, headers: Mapping[str, str] | None) -> AbstractContextManager[Any]:
    if not _sinks:
        return _NOTHING
    if len(_sinks) == 1:
        return _sinks[0].tool_call(tool, caller, headers)
    return _all_tool_calls(_sinks, tool, caller, headers)


@contextlib.contextmanager
def _all_tool_calls(sinks: Sequence[Sink], tool: str, caller: str, headers: Mapping[str, str] | None) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for sink in sinks:
            stack.enter_context(sink.tool_call(tool, caller, headers))
        yield


def routed_call(caller: str, args: RouterCallInput) -> RoutedCall:
    if not _sinks:
        return _NO_CALL
    facts = CallFacts(caller, args)
    if len(_sinks) == 1:
        return _sinks[0].routed_call(facts)
    return _Both(tuple(sink.routed_call(facts) for sink in _sinks))


def attempt(provider: str, model: str, key: str | None = None) -> Attempt:
    if not _sinks:
        return _NO_ATTEMPT
    if len(_sinks) == 1:
        return _sinks[0].attempt(provider, model, key)
    return _Both(tuple(sink.attempt(provider, model, key) for sink in _sinks))


def key_set_aside(provider: str, key: str, reason: str) -> None:
    for sink in _sinks:
        sink.key_set_aside(provider, key, reason)


def retried(provider: str, model: str, kind: str) -> None:
    for sink in _sinks:
        sink.retried(provider, model, kind)


class _Both(Attempt, RoutedCall):
    """Several sinks' views of one attempt or call."""

    __slots__ = ("_parts",)

    def __init__(self, parts: tuple[Any, ...]) -> None:
        self._parts = parts

    def end(self, turn: AssistantTurn | None = None, error: BaseException | None = None) -> None:
        for part in self._parts:
            part.end(turn, error)

    def finished(self, result: RouterCallResult | None, error: ColibriError | None) -> None:
        for part in self._parts:
            part.finished(result, error)
