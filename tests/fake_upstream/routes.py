"""The route: one provider endpoint family of the fake, its reply queues, recordings and wire dialect.

A route owns a path prefix (``/<name>/...``), answers the chat endpoint and the model list under it, and
says how its service checks requests (``auth_problems``, ``validate``), shapes errors (``error_body``),
streams (``stream_frames``) and answers when nothing is scripted (``echo_reply``). Each wire module
subclasses it; the server only talks to this interface.
"""

from __future__ import annotations

import abc
import json
import re
import threading
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal
from urllib.parse import parse_qs

from .replies import SSE, ErrorReply, MessageReply, Reply

Endpoint = Literal["chat", "models"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it; ``body`` is the parsed JSON, or None if it was not JSON."""

    route: str  # the route's name, or "" for an unknown path
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any
    raw: bytes
    at: float  # time.monotonic() on arrival
    query: str = ""  # the raw query string
    endpoint: str = "chat"  # "chat", "models", or "" for an unknown path

    @property
    def query_params(self) -> dict[str, list[str]]:
        return parse_qs(self.query)


@dataclass(frozen=True)
class Disconnect:
    """A client that hung up while the fake was still answering it."""

    route: str
    path: str
    at: float  # time.monotonic() when the fake noticed


class Problem(str):
    """Why the real service would refuse a request. It reads as its message (so lists of problems compare
    to plain strings) and carries how the service answers it: status, error type, code, param, and extra
    fields for the error object (``ErrorReply`` has the same fields)."""

    status: int
    error_type: str | None
    code: str | int | None
    param: str | None
    extra: Mapping[str, Any]

    def __new__(
        cls,
        message: str,
        *,
        status: int = 400,
        error_type: str | None = None,
        code: str | int | None = None,
        param: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Problem:
        problem = super().__new__(cls, message)
        problem.status, problem.error_type, problem.code, problem.param = status, error_type, code, param
        problem.extra = dict(extra or {})
        return problem

    def as_error(self) -> ErrorReply:
        """The answer the service gives for this problem."""
        return ErrorReply(self.status, self.error_type, str(self), code=self.code, param=self.param, extra=self.extra)


@dataclass
class _Queues:
    chat: deque[Reply] = field(default_factory=deque)
    models: deque[Reply] = field(default_factory=deque)
    chat_requests: list[RecordedRequest] = field(default_factory=list)
    by_key: dict[tuple[str, str], deque[Reply]] = field(default_factory=dict)  # (endpoint, API key) → replies
    model_requests: list[RecordedRequest] = field(default_factory=list)


class Route(abc.ABC):
    """One provider endpoint family: its reply queues, its requests, and its wire dialect. Thread-safe.

    ``models`` is the list the model-list endpoint answers with (settable); ``enqueue_model_list`` scripts
    that endpoint (e.g. an error) the way ``enqueue`` scripts the chat endpoint.
    """

    chat_path: ClassVar[str]  # appended to the prefix
    models_path: ClassVar[str]
    ping_frame: bytes | None = b": ping\n\n"  # sent while a stream is held open; None: silence
    stream_content_type: str = SSE

    def __init__(self, name: str, prefix: str, models: Sequence[str]) -> None:
        self.name = name
        self.prefix = prefix  # the path the base URL ends with, e.g. "/openai/v1"
        self.models = list(models)
        self._lock = threading.Lock()
        self._queues = _Queues()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.prefix}>"

    # -- scripting and recordings ---------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next chat requests with ``replies``, in order."""
        self._check_replies(replies)
        with self._lock:
            self._queues.chat.extend(replies)

    def enqueue_for_key(self, key: str, *replies: Reply, endpoint: Endpoint = "chat") -> None:
        """Answer the next requests sent with API key ``key`` to ``endpoint`` with ``replies``, in order,
        before the route's common queue (a pool of keys each answered its own way)."""
        self._check_replies(replies)
        with self._lock:
            self._queues.by_key.setdefault((endpoint, key), deque()).extend(replies)

    def enqueue_model_list(self, *replies: Reply) -> None:
        """Answer the next model-list requests with ``replies`` (e.g. an ``error``), in order."""
        self._check_replies(replies)
        with self._lock:
            self._queues.models.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The chat requests this route received, in order."""
        with self._lock:
            return list(self._queues.chat_requests)

    @property
    def model_list_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._queues.model_requests)

    def _check_replies(self, replies: Sequence[Reply]) -> None:
        """Render errors once now, so that a bad ``variant`` fails in the test, not in a server thread."""
        for reply in replies:
            if isinstance(reply, ErrorReply):
                self.error_body(reply)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            if request.endpoint == "models":
                self._queues.model_requests.append(request)
            else:
                self._queues.chat_requests.append(request)

    def _clear(self) -> None:
        with self._lock:
            self._queues = _Queues()
        self.forget_issued()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            own = self._queues.by_key.get((request.endpoint, request_key(request)))
            if own:
                return own.popleft()
            queue = self._queues.models if request.endpoint == "models" else self._queues.chat
            if queue:
                return queue.popleft()
        if request.endpoint == "models":
            return MessageReply(self.model_list_body())
        return self.echo_reply(request)

    # -- the dialect ------------------------------------------------------------------------------------

    def endpoint(self, method: str, subpath: str) -> Endpoint | None:
        """Which endpoint ``method`` on ``{prefix}{subpath}`` is, or None if the service has no such path."""
        if method == "POST" and subpath == self.chat_path:
            return "chat"
        if method == "GET" and subpath == self.models_path:
            return "models"
        return None

    def problems(self, request: RecordedRequest) -> list[Problem]:
        """Why the service refuses this request; ``[]`` if it accepts it. A request without valid
        credentials is refused for that alone, before its body is looked at."""
        if problems := self.auth_problems(request):
            return problems
        return self.validate(request) if request.endpoint == "chat" else []

    def silent_problems(self, request: RecordedRequest) -> list[str]:
        """Mistakes in a chat request that the service answers anyway, degrading silently: recorded as
        violations, not refused."""
        return []

    def wants_stream(self, request: RecordedRequest) -> bool:
        return isinstance(request.body, dict) and request.body.get("stream") is True

    def json_body(self, body: Mapping[str, Any], request: RecordedRequest) -> Any:
        """What a non-streamed answer sends for ``body`` (the body itself on every wire but one)."""
        return body

    def remember_issued(self, body: Mapping[str, Any]) -> None:  # noqa: B027 (a hook: most wires issue nothing)
        """Note the opaque values (signatures, IDs) an answer hands out, to check them when they come back."""

    def forget_issued(self) -> None:  # noqa: B027 (a hook, as above)
        """Drop what ``remember_issued`` noted (``reset``)."""

    @abc.abstractmethod
    def auth_problems(self, request: RecordedRequest) -> list[Problem]: ...

    @abc.abstractmethod
    def validate(self, request: RecordedRequest) -> list[Problem]: ...

    @abc.abstractmethod
    def error_body(self, error: ErrorReply) -> Any: ...

    @abc.abstractmethod
    def stream_frames(self, body: Mapping[str, Any], request: RecordedRequest) -> list[bytes]: ...

    @abc.abstractmethod
    def echo_reply(self, request: RecordedRequest) -> MessageReply: ...

    @abc.abstractmethod
    def model_list_body(self) -> Any: ...


# ---------------------------------------------------------------------------------------------------------
# Helpers the wire modules share


def request_key(request: RecordedRequest) -> str:
    """The API key a request carries, however its wire sends it (bearer, x-api-key, x-goog-api-key or
    Gemini's ``?key=``); "" without one."""
    headers = request.headers
    bearer = headers.get("authorization", "")
    if bearer.lower().startswith("bearer "):
        return bearer[7:].strip()
    for name in ("x-api-key", "x-goog-api-key"):
        if headers.get(name):
            return headers[name]
    return (request.query_params.get("key") or [""])[0]


def lower_keys(headers: Mapping[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def has_bearer(headers: Mapping[str, str]) -> bool:
    """An ``Authorization: Bearer <key>`` header with a non-empty key."""
    return re.fullmatch(r"Bearer \S+", lower_keys(headers).get("authorization", "")) is not None


def one_of(value: object, choices: Collection[str]) -> bool:
    """``value`` is one of these strings (False for anything else, hashable or not)."""
    return isinstance(value, str) and value in choices


def objects(items: Any) -> list[dict[str, Any]]:
    """The objects in ``items`` if it is a list, else none (content blocks, parts, tool calls)."""
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def text_of(content: Any) -> str:
    """A message's text: a string, or its ``{"type": "text"}`` / ``{"text": ...}`` parts joined."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in objects(content) if part.get("type", "text") == "text" and "text" in part)


def last_user_text(messages: Any, role: str = "user") -> str:
    """The text of the last message with ``role`` (``content`` or, for Gemini, ``parts``)."""
    for msg in reversed(objects(messages)):
        if msg.get("role") == role:
            return text_of(msg.get("content", msg.get("parts")))
    return ""


def token_estimate(value: Any) -> int:
    """A rough prompt size in tokens (4 characters each), for the usage of echo replies."""
    return 1 + len(json.dumps(value)) // 4
