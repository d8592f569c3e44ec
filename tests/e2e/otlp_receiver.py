"""A loopback OpenTelemetry collector for the tests: it accepts OTLP/HTTP trace exports (protobuf,
``POST /v1/traces``, as the exporter sends them) and keeps the spans, decoded."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    service: str


class Collector:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.raw: list[bytes] = []
        self._lock = threading.Lock()

    def add(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        with self._lock:
            self.raw.append(body)
            for resource in request.resource_spans:
                resource_attributes = {a.key: _value(a.value) for a in resource.resource.attributes}
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        self.spans.append(
                            ReceivedSpan(
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                attributes={a.key: _value(a.value) for a in span.attributes},
                                service=str(resource_attributes.get("service.name")),
                            )
                        )

    def wait_for(self, name: str, timeout_s: float = 15.0) -> list[ReceivedSpan]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                found = [span for span in self.spans if span.name == name]
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no span {name!r} arrived; got {[s.name for s in self.spans]}")


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@contextmanager
def otlp_collector() -> Iterator[tuple[str, Collector]]:
    """A collector on a free loopback port; yields its base URL (for OTEL_EXPORTER_OTLP_ENDPOINT)."""
    collector = Collector()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            collector.add(body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", collector
    finally:
        server.shutdown()
        server.server_close()
