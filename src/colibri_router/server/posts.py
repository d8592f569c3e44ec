"""The POSTs on ``serve --http``'s MCP path: each answered as one JSON body when nothing but its
answer can be sent, and cancellations routed to the replica running the call.

**One JSON body when the call is silent.** For a request of a handshake-era protocol (2025-11-25 and
before), the SDK's stateless transport opens an SSE stream in its default mode. Before the answer, that
stream can only carry progress notifications, which the SDK sends only for a request whose ``_meta``
has a progress token: stateless HTTP gives a server no way to ask the client anything. Without a
token the stream carries the answer alone, yet opening it (a response task, a writer task, memory
streams, the SSE framing) costs about 0.5 ms of server CPU, a fifth of a whole ``router_call``. Such a
request goes to a second session manager of the same server in JSON-response mode, the shape the
SDK itself chooses for a quick 2026-07-28 request (those keep the SDK's own choice):

- The JSON-response mode does not watch the connection; :func:`_answer_once` does, so a client that
  closes its connection cancels its call, as with SSE.
- An answer not ready after :data:`KEEPALIVE_S` commits to SSE anyway and sends a comment line every
  :data:`KEEPALIVE_S`, so that an idle-read timeout in a proxy cannot cut a long call; the answer
  is then the stream's one ``message`` event.

**Cancellation.** In stateless mode a ``notifications/cancelled`` arrives on a POST of its own, which
the SDK acknowledges and drops. Once the SDK has accepted it (202: Host and protocol checks passed),
the call it names is cancelled by (caller, request id) in this process, or its key is published to
the other replicas when the store can broadcast (PostgreSQL ``NOTIFY``).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from colibri_router.errors import ColibriError
from colibri_router.logs import get_logger
from colibri_router.server.identity import caller_name
from colibri_router.server.inflight import IN_FLIGHT, call_key
from colibri_router.settings import load_settings
from colibri_router.store import CancelBroadcast, shared_store

# Every this many seconds a late answer's stream gets a comment line (the SDK's and sse-starlette's ping).
KEEPALIVE_S = 15.0
# A larger body is a request with files or a long conversation, passed on unread: parsing it here as
# well would cost more than the stream saves, on a call that is slow anyway.
_LARGEST_READ_BODY = 64 * 1024
_PROTOCOL_HEADER = b"mcp-protocol-version"
_STREAM_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),  # nginx: pass each line on at once
]


class McpPosts:
    """The ASGI endpoint of the MCP path, behind the SDK's authentication: each request to the SDK's
    own session manager (``streamed``) or to ``single``, the same server in JSON-response mode."""

    def __init__(self, streamed: StreamableHTTPSessionManager, single: StreamableHTTPSessionManager) -> None:
        self.streamed = streamed
        self.single = single

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        readable, accepts_stream = _headers(scope) if scope["method"] == "POST" else (False, False)
        if not readable:
            await self.streamed.handle_request(scope, receive, send)
            return
        body, replay = await _read_body(receive)
        message = _json_object(body)
        if message is None or not isinstance(message.get("method"), str):
            await self.streamed.handle_request(scope, replay, send)  # the SDK answers what is wrong
        elif "id" not in message:
            await self._notification(message, scope, replay, send)
        elif _progress_token(message) is None:
            await _answer_once(self.single, scope, _OneAnswer(body, receive, send, may_stream=accepts_stream))
        else:
            await self.streamed.handle_request(scope, replay, send)

    async def _notification(self, message: dict[str, Any], scope: Scope, receive: Receive, send: Send) -> None:
        key = _cancelled_key(message)
        if key is None:
            await self.streamed.handle_request(scope, receive, send)
            return
        status = 0

        async def watch(response: Message) -> None:
            nonlocal status
            if response["type"] == "http.response.start":
                status = response["status"]
            await send(response)

        await self.streamed.handle_request(scope, receive, watch)
        if status == 202:
            await route_cancel(key)


def _headers(scope: Scope) -> tuple[bool, bool]:
    """Whether the request is a handshake-era one small enough to read here (the 2026-07-28 ones are the
    SDK's to shape), and whether its client accepts an SSE stream."""
    size = version = None
    accepts_stream = False
    for name, value in scope["headers"]:
        if name == b"content-length":
            size = int(value) if value.isdigit() else None
        elif name == _PROTOCOL_HEADER:
            version = value.decode("latin-1")
        elif name == b"accept":
            accepts_stream = accepts_stream or b"text/event-stream" in value
    handshake_era = version is None or version in HANDSHAKE_PROTOCOL_VERSIONS
    return handshake_era and size is not None and size <= _LARGEST_READ_BODY, accepts_stream


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a ``receive`` that hands it to the app again."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), receive
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    messages: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

    async def replay() -> Message:
        return messages.pop() if messages else await receive()

    return messages[0]["body"], replay


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _progress_token(message: dict[str, Any]) -> object:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


def _cancelled_key(message: dict[str, Any]) -> str | None:
    """The call a ``notifications/cancelled`` names, keyed by the caller the SDK's auth middleware
    identified; None for any other notification."""
    if message.get("method") != "notifications/cancelled":
        return None
    params = message.get("params")
    request_id = params.get("requestId") if isinstance(params, dict) else None
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        return None
    return call_key(caller_name(), request_id)


async def route_cancel(key: str) -> None:
    """Cancel the call here; else tell the other replicas (their listeners cancel it). A failure is
    logged, never raised: the notification was already acknowledged."""
    if IN_FLIGHT.cancel(key):
        return
    try:
        store = shared_store(load_settings())
        if isinstance(store, CancelBroadcast):
            await store.publish_cancel(key)
    except ColibriError as error:
        get_logger(__name__).warning("could not pass a cancellation to the other replicas", error=str(error))


async def _answer_once(manager: StreamableHTTPSessionManager, scope: Scope, answer: _OneAnswer) -> None:
    """The request through ``manager`` (JSON-response mode), its connection watched meanwhile."""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(answer.guard, tasks.cancel_scope)
        await manager.handle_request(scope, answer.receive, answer.send)
        tasks.cancel_scope.cancel()


class _OneAnswer:
    """The ``receive`` and ``send`` of a request answered in one JSON body, which turn it into an SSE
    stream if it is late, and the guard that watches its connection (see the module)."""

    def __init__(self, body: bytes, receive: Receive, send: Send, *, may_stream: bool) -> None:
        self._unread: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
        self._receive = receive  # the connection's, its body already read
        self._send = send
        self._may_stream = may_stream  # the client accepts SSE
        self._state: Literal["waiting", "answering", "streaming", "done"] = "waiting"
        self._gone = anyio.Event()
        self._lock = anyio.Lock()
        self._held: list[bytes] = []

    async def receive(self) -> Message:
        """For the app: the body, then the disconnect the guard saw, if it sees one."""
        if self._unread:
            return self._unread.pop()
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        final = message["type"] == "http.response.body" and not message.get("more_body", False)
        async with self._lock:
            if self._state != "streaming":
                self._state = "done" if final else "answering"
                await self._send(message)
            elif message["type"] == "http.response.body":  # the JSON response's own start is dropped
                self._held.append(message.get("body", b""))
                if final:
                    self._state = "done"
                    await self._send({"type": "http.response.body", "body": _message_event(b"".join(self._held))})

    async def guard(self, call: anyio.CancelScope) -> None:
        """Until cancelled: cancel ``call`` when the client goes; keep a late answer's stream alive."""
        while True:
            with anyio.move_on_after(KEEPALIVE_S if self._may_stream else math.inf):
                while (await self._receive())["type"] != "http.disconnect":
                    pass
                if self._state != "done":  # after the answer, the server's own disconnect: nothing to stop
                    self._gone.set()
                    call.cancel()
                return
            async with self._lock:
                if self._state in ("answering", "done"):
                    return
                if self._state == "waiting":
                    self._state = "streaming"
                    await self._send({"type": "http.response.start", "status": 200, "headers": _STREAM_HEADERS})
                await self._send({"type": "http.response.body", "body": b": keepalive\n\n", "more_body": True})


def _message_event(body: bytes) -> bytes:
    data = b"".join(b"data: " + line + b"\n" for line in body.splitlines())
    return b"event: message\n" + data + b"\n"
