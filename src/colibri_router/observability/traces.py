"""OpenTelemetry traces, opt-in: with ``OTEL_EXPORTER_OTLP_ENDPOINT`` set (and the ``otel`` extra
installed), every MCP tool call is a span, and every upstream request of a router_call a child span.

The MCP SDK already opens a span for each request it handles (``tools/call router_call``, with
``gen_ai.operation.name=execute_tool`` and ``gen_ai.tool.name``) through the global tracer provider,
which this module sets: that span is the tool call's, and the router adds to it rather than opening a
second one (a server built without the SDK's tracing gets a span of ours, ``execute_tool <tool>``).
Spans follow the GenAI semantic conventions::

    tools/call router_call        SERVER (the SDK's); we add colibri_router.caller and, for router_call,
                                  gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model,
                                  gen_ai.usage.input_tokens/output_tokens, colibri_router.error.kind
                                  and .code (the SDK sets error.type=tool_error on a failed call)
      chat <model>                CLIENT, one per upstream request (a retry is another):
                                  gen_ai.operation.name=chat, gen_ai.provider.name (the registry
                                  name), gen_ai.request.model, error.type (the failure's kind),
                                  colibri_router.key (a pool key's fingerprint, docs/keys.md), and
                                  as above for the answer

A ``traceparent`` in the tool call's ``_meta`` is continued by the SDK; over HTTP, one in the request's
headers is too (:func:`continue_http_trace`, the propagators of ``OTEL_PROPAGATORS``, W3C trace
context by default). No prompt or answer text is recorded unless ``COLIBRI_OTEL_CONTENT=1`` (then
``gen_ai.input.messages`` and ``gen_ai.output.messages``, as JSON); never a header, so never a key
or a token. Spans go to the collector over OTLP/HTTP (protobuf), configured by the standard
``OTEL_*`` variables (endpoint, headers, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, the
batch processor's delays); the service name defaults to ``colibri-router``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagate import extract
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from colibri_router import __version__
from colibri_router.conversation import AssistantTurn
from colibri_router.errors import ColibriError
from colibri_router.observability import Attempt, CallFacts, RoutedCall, Sink
from colibri_router.schema import RouterCallResult
from colibri_router.settings import load_settings

SERVICE = "colibri-router"


def tracer_provider_from_environment() -> TracerProvider:
    """A provider exporting over OTLP/HTTP as the standard variables say, flushed at exit."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    attributes = {SERVICE_VERSION: __version__}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = SERVICE  # else the variable names it (Resource.create reads it)
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


class Traces(Sink):
    """Spans through ``provider`` (the process's, or a test's with an in-memory exporter)."""

    def __init__(self, provider: trace.TracerProvider) -> None:
        self._tracer = provider.get_tracer("colibri_router", __version__)

    def tool_call(self, tool: str, caller: str, headers: Mapping[str, str] | None) -> AbstractContextManager[None]:
        return self._tool_span(tool, caller, headers)

    @contextmanager
    def _tool_span(self, tool: str, caller: str, headers: Mapping[str, str] | None) -> Iterator[None]:
        current = trace.get_current_span()
        if current.is_recording():  # the SDK's span for this request
            current.set_attribute("colibri_router.caller", caller)
            yield
            return
        parent = extract(headers) if headers else None
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "colibri_router.caller": caller,
        }
        with self._tracer.start_as_current_span(
            f"execute_tool {tool}", context=parent, kind=SpanKind.SERVER, attributes=attributes
        ):
            yield

    def routed_call(self, call: CallFacts) -> RoutedCall:
        return _CallSpan(trace.get_current_span(), call)

    def attempt(self, provider: str, model: str, key: str | None = None) -> Attempt:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider, "gen_ai.request.model": model}
        if key is not None:
            attributes["colibri_router.key"] = key  # the pool key's fingerprint, never the key
        span = self._tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)
        return _AttemptSpan(span)


class ContinueHttpTrace:
    """ASGI middleware: a request's ``traceparent`` header becomes the current trace context while the
    app handles it, so the SDK's span for the tool call (opened in a task the request starts, which
    inherits the context) continues the client's trace."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not any(name == b"traceparent" for name, _ in scope["headers"]):
            await self.app(scope, receive, send)
            return
        carrier = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
        token = otel_context.attach(extract(carrier))
        try:
            await self.app(scope, receive, send)
        finally:
            otel_context.detach(token)


class _AttemptSpan(Attempt):
    __slots__ = ("_span",)

    def __init__(self, span: Span) -> None:
        self._span = span

    def end(self, turn: AssistantTurn | None = None, error: BaseException | None = None) -> None:
        span = self._span
        if turn is not None:
            if turn.model:
                span.set_attribute("gen_ai.response.model", turn.model)
            span.set_attribute("gen_ai.usage.input_tokens", turn.usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", turn.usage.completion_tokens)
            if turn.stop_reason:
                span.set_attribute("gen_ai.response.finish_reasons", [turn.stop_reason])
        elif error is not None:
            _mark_failed(span, error)
        span.end()


class _CallSpan(RoutedCall):
    """router_call's facts on the tool call's span."""

    __slots__ = ("_call", "_span")

    def __init__(self, span: Span, call: CallFacts) -> None:
        self._span = span
        self._call = call

    def finished(self, result: RouterCallResult | None, error: ColibriError | None) -> None:
        span, args = self._span, self._call.args
        if not span.is_recording():
            return
        attempts = [dict(a) if isinstance(a, Mapping) else a.model_dump() for a in _attempts(result, error)]
        requested = attempts[0]["model"] if attempts else args.model
        if requested:
            span.set_attribute("gen_ai.request.model", requested)
        content = load_settings().otel_content == "1"
        if content:
            span.set_attribute("gen_ai.input.messages", _input_messages(args.model_dump(mode="json")))
        if result is not None:
            span.set_attribute("gen_ai.provider.name", result.provider)
            span.set_attribute("gen_ai.response.model", result.model)
            span.set_attribute("gen_ai.usage.input_tokens", result.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", result.completion_tokens)
            if content:
                output = [{"role": "assistant", "parts": [{"type": "text", "content": result.content}]}]
                span.set_attribute("gen_ai.output.messages", json.dumps(output, ensure_ascii=False))
            return
        provider = (error.provider if error else None) or (attempts[-1]["provider"] if attempts else args.provider)
        if provider:
            span.set_attribute("gen_ai.provider.name", provider)
        if error is not None:
            _mark_failed(span, error)


def _attempts(result: RouterCallResult | None, error: ColibriError | None) -> list[Any]:
    if result is not None:
        return list(result.attempts)
    return list(error.attempts) if error is not None else []


def _mark_failed(span: Span, error: BaseException) -> None:
    """``error.type`` is the kind an agent acts on (on the SDK's tool span, the SDK then writes its own
    ``tool_error`` over it: ``colibri_router.error.kind`` keeps ours); the code names it exactly. No
    message: an upstream's may quote the request."""
    if isinstance(error, ColibriError):
        span.set_attribute("error.type", error.kind)
        span.set_attribute("colibri_router.error.kind", error.kind)
        span.set_attribute("colibri_router.error.code", error.code)
        span.set_status(Status(StatusCode.ERROR, error.code))
    else:
        span.set_attribute("error.type", type(error).__qualname__)
        span.set_status(Status(StatusCode.ERROR))


def _input_messages(args: Mapping[str, Any]) -> str:
    """The call's system prompt and conversation as the conventions' message list (text parts, and
    any other block as a part of its own type)."""
    messages: list[dict[str, Any]] = []
    if args.get("system_prompt"):
        messages.append({"role": "system", "parts": [{"type": "text", "content": args["system_prompt"]}]})
    if args.get("prompt") is not None:
        messages.append({"role": "user", "parts": [{"type": "text", "content": args["prompt"]}]})
    for message in args.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        parts = [
            {"type": "text", "content": block.get("text", "")}
            if block.get("type") == "text"
            else {"type": block.get("type", "unknown"), "content": block}
            for block in blocks
        ]
        messages.append({"role": message.get("role", "user"), "parts": parts})
    return json.dumps(messages, ensure_ascii=False)
