"""The loopback HTTP/1.1 server: routing, recording, refusals, and delivery of replies over real sockets.

One daemon thread per connection. Every wait and write notices a client that hangs up (a zero-byte peek
on the socket) and records it in ``fake.disconnects``; ``stop()`` wakes every reply that is waiting.
"""

from __future__ import annotations

import contextlib
import functools
import json
import selectors
import socket
import socketserver
import threading
import time
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .anthropic import AnthropicRoute
from .cohere import CohereRoute
from .gemini import GeminiRoute
from .ollama import OllamaRoute
from .openai_family import KimiRoute, openai_family_routes
from .replies import ErrorReply, MessageReply, RawBodyReply, RawStreamReply, Reply, sse_frame
from .routes import Disconnect, RecordedRequest, Route

_TICK_S = 0.05  # granularity of every wait, and the ping interval of held-open streams
_REASONS = {529: "Overloaded", 498: "Capacity Exceeded"}  # statuses http.HTTPStatus does not know


class FakeUpstream:
    """The loopback server. Use as a context manager, or ``start()`` / ``stop()``. Thread-safe."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.latency_s = 0.0  # added before every reply (benchmarks set 0.2)
        self._lock = threading.Lock()
        self._disconnected = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._violations: list[str] = []
        self._disconnects: list[Disconnect] = []
        self.kimi = KimiRoute()
        self.anthropic = AnthropicRoute("anthropic")
        self.gemini = GeminiRoute()
        self.cohere = CohereRoute()
        self.ollama = OllamaRoute()
        routes: list[Route] = [
            self.kimi,
            *openai_family_routes(),
            self.anthropic,
            AnthropicRoute("kimi-anthropic"),
            self.gemini,
            self.cohere,
            self.ollama,
        ]
        self._routes: dict[str, Route] = {route.name: route for route in routes}
        self._server = _Server((host, port), self)
        # A short poll interval: stop() waits for the accept loop to poll once.
        serve = functools.partial(self._server.serve_forever, poll_interval=0.01)
        self._thread = threading.Thread(target=serve, name="fake-upstream", daemon=True)

    # -- addresses and routes ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self._server.server_name}:{self._server.server_port}"

    @property
    def routes(self) -> dict[str, Route]:
        """Every route by name."""
        return dict(self._routes)

    def route(self, name: str) -> Route:
        """The route called ``name`` (e.g. ``"openrouter"``); KeyError naming the known ones otherwise."""
        try:
            return self._routes[name]
        except KeyError:
            raise KeyError(f"no route {name!r}; routes: {', '.join(self._routes)}") from None

    def base_url(self, name: str) -> str:
        """The base URL a client of route ``name`` is configured with (the router appends its paths)."""
        return self.url + self.route(name).prefix

    @property
    def kimi_base_url(self) -> str:
        return self.base_url("kimi")

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url("anthropic")

    # -- life cycle -------------------------------------------------------------------------------------

    def start(self) -> FakeUpstream:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, end every open connection, and wake every reply that is waiting."""
        self._stopping.set()
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()
        self._server.close_connections()

    def __enter__(self) -> FakeUpstream:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- recordings -------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def violations(self) -> list[str]:
        """Every wire rule a request broke, as ``"<route>: <problem>"``."""
        with self._lock:
            return list(self._violations)

    @property
    def disconnects(self) -> list[Disconnect]:
        with self._lock:
            return list(self._disconnects)

    def wait_disconnect(self, timeout: float) -> Disconnect | None:
        """The first client hang-up, waiting up to ``timeout`` seconds for one; None if none came."""
        with self._disconnected:
            self._disconnected.wait_for(lambda: self._disconnects, timeout)
            return self._disconnects[0] if self._disconnects else None

    def reset(self) -> None:
        """Forget scripted replies, recordings and issued values; settings (latency_s, strict_ids, models) stay."""
        for route in self._routes.values():
            route._clear()
        with self._lock:
            self._requests.clear()
            self._violations.clear()
            self._disconnects.clear()

    # -- serving ----------------------------------------------------------------------------------------

    def _resolve(self, method: str, path: str) -> tuple[Route | None, str]:
        for route in self._routes.values():
            if path.startswith(route.prefix + "/"):
                return route, route.endpoint(method, path[len(route.prefix) :]) or ""
        return None, ""

    def _serve(self, handler: _Handler) -> None:
        target = urlsplit(handler.path)
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        route, endpoint = self._resolve(handler.command, target.path)
        headers = {name.lower(): value for name, value in handler.headers.items()}
        request = RecordedRequest(
            route.name if route and endpoint else "",
            handler.command,
            target.path,
            headers,
            body,
            raw,
            time.monotonic(),
            target.query,
            endpoint,
        )
        with self._lock:
            self._requests.append(request)
        if route is None or not endpoint:  # a wrong base URL: answer like a web server would, and say so
            self._violate(f"unknown route {handler.command} {target.path}")
            handler.send_error(404, f"no route {target.path}")
            return
        route._record(request)
        ex = _Exchange(self, handler, route, target.path)
        if not ex.wait(self.latency_s):
            return
        if problems := route.problems(request):
            for problem in problems:
                self._violate(f"{route.name}: {problem}")
            refusal = problems[0].as_error()
            ex.send_json(refusal.status, route.error_body(refusal))
            return
        for mistake in route.silent_problems(request) if endpoint == "chat" else []:
            self._violate(f"{route.name}: {mistake}")
        _deliver(ex, route._next_reply(request), request)

    def _violate(self, problem: str) -> None:
        with self._lock:
            self._violations.append(problem)

    def _record_disconnect(self, route: str, path: str) -> None:
        with self._disconnected:
            self._disconnects.append(Disconnect(route, path, time.monotonic()))
            self._disconnected.notify_all()


def _deliver(ex: _Exchange, reply: Reply, request: RecordedRequest) -> None:
    """Send ``reply`` as the answer to ``request``, after its delay."""
    route = ex.route
    if not ex.wait(reply.delay_s):
        return
    if isinstance(reply, MessageReply):
        if request.endpoint == "chat":
            route.remember_issued(reply.body)
        if request.endpoint == "chat" and route.wants_stream(request):
            frames = route.stream_frames(reply.body, request)
            ex.stream(frames, route.stream_content_type, route.ping_frame, hold_open_s=reply.hold_open_s)
        # A JSON answer has nowhere to put pings: holding it open is just more delay.
        elif ex.wait(reply.hold_open_s):
            ex.send_json(200, route.json_body(reply.body, request))
    elif isinstance(reply, RawStreamReply):
        ex.stream(
            [sse_frame(event) for event in reply.events],
            reply.content_type,
            route.ping_frame,
            hold_open_s=reply.hold_open_s,
            event_delay_s=reply.event_delay_s,
            drop_after=reply.drop_after,
        )
    elif isinstance(reply, ErrorReply):
        ex.send_json(reply.status, route.error_body(reply), reply.headers)
    elif isinstance(reply, RawBodyReply):
        ex.send(reply.status, reply.body, reply.content_type, reply.headers)


class _Exchange:
    """The answer to one request in flight: waits and writes that notice a client hanging up."""

    def __init__(self, fake: FakeUpstream, handler: _Handler, route: Route, path: str) -> None:
        self.fake, self.handler, self.route, self.path = fake, handler, route, path
        self._gone = False

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; False, and stop answering, if the client hangs up or the fake stops."""
        if seconds <= 0:
            return not self._gone
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            selector.register(self.handler.connection, selectors.EVENT_READ)
            while (left := deadline - time.monotonic()) > 0:
                if self.fake._stopping.is_set():
                    self.handler.close_connection = True
                    return False
                if selector.select(min(left, _TICK_S)) and self._peer_closed():
                    self._hung_up()
                    return False
        return not self._gone

    def _peer_closed(self) -> bool:
        try:
            closed: bool = self.handler.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
        if not closed:  # the client sent more bytes (pipelining): not a hang-up, but don't spin on it
            time.sleep(_TICK_S)
        return closed

    def _hung_up(self) -> None:
        if self._gone:
            return
        self._gone = True
        self.handler.close_connection = True
        self.fake._record_disconnect(self.route.name, self.path)

    def write(self, data: bytes) -> bool:
        try:
            self.handler.wfile.write(data)
        except OSError:
            self._hung_up()
            return False
        return True

    def send(self, status: int, body: bytes, content_type: str, headers: Mapping[str, str]) -> None:
        self._head(status, {"Content-Type": content_type, "Content-Length": str(len(body)), **headers})
        self.write(body)

    def send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self.send(status, json.dumps(obj).encode(), "application/json", headers or {})

    def stream(
        self,
        frames: Sequence[bytes],
        content_type: str,
        ping_frame: bytes | None,
        *,
        hold_open_s: float = 0.0,
        event_delay_s: float = 0.0,
        drop_after: int | None = None,
    ) -> None:
        """Send frames as HTTP chunks: pings (or silence) while held open, the frames, then the terminator."""
        self._head(200, {"Content-Type": content_type, "Cache-Control": "no-cache", "Transfer-Encoding": "chunked"})
        deadline = time.monotonic() + hold_open_s
        while (left := deadline - time.monotonic()) > 0:
            if ping_frame is not None and not self._chunk(ping_frame):
                return
            if not self.wait(min(left, _TICK_S)):
                return
        for n, frame in enumerate(frames):
            if n == drop_after:  # cut: no terminating chunk, so the client sees an incomplete body
                self.handler.close_connection = True
                with contextlib.suppress(OSError):
                    self.handler.connection.shutdown(socket.SHUT_RDWR)
                return
            if (n and not self.wait(event_delay_s)) or not self._chunk(frame):
                return
        self.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> bool:
        return self.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _head(self, status: int, headers: Mapping[str, str]) -> None:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:  # e.g. Anthropic's 529, Groq's 498
            reason = _REASONS.get(status, "Unknown")
        self.handler.send_response(status, reason)
        for name, value in headers.items():
            self.handler.send_header(name, value)
        try:
            self.handler.end_headers()
        except OSError:
            self._hung_up()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked streams
    # The head and every stream chunk are separate small writes; with Nagle's algorithm each write after
    # an unacknowledged one waits for the client's delayed ACK (~40 ms). Real upstreams don't stall so.
    disable_nagle_algorithm = True
    server: _Server

    def do_POST(self) -> None:
        self.server.fake._serve(self)

    def do_GET(self) -> None:
        self.server.fake._serve(self)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the per-request access log off stderr."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # listen backlog: benchmarks open 100+ connections at once

    def __init__(self, address: tuple[str, int], fake: FakeUpstream) -> None:
        self.fake = fake
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (socket.getfqdn), which can take seconds.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.socket.getsockname()[:2]

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """End idle keep-alive connections, so that their handler threads finish."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
