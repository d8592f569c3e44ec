"""What a route answers: the reply kinds a test enqueues, and the framing of streams on the wire.

Reply kinds (frozen dataclasses, made by the functions below):

- ``MessageReply``: a final answer given as the provider's non-streamed body; the route sends it as JSON,
  or as the stream its service would send for it when the request asked for a stream.
- ``RawStreamReply``: exactly these frames, SSE by default (``raw_ndjson`` for NDJSON), whatever was asked.
- ``ErrorReply``: an error, rendered in the shape of the route it is enqueued on.
- ``RawBodyReply``: any status, body and content type.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"

SseEvent = str | tuple[str, str] | bytes
"""An SSE event for ``raw_stream``: ``data`` text, ``(event, data)``, or bytes sent verbatim."""


@dataclass(frozen=True)
class MessageReply:
    """A final answer in the provider's non-streamed body shape; streamed on request."""

    body: Mapping[str, Any]
    delay_s: float = 0.0
    hold_open_s: float = 0.0


@dataclass(frozen=True)
class RawStreamReply:
    """Exactly these frames (``sse_frame`` applied to each event), whatever the request asked for."""

    events: Sequence[SseEvent]
    delay_s: float = 0.0
    event_delay_s: float = 0.0
    drop_after: int | None = None
    hold_open_s: float = 0.0
    content_type: str = SSE


@dataclass(frozen=True)
class ErrorReply:
    """An error in the shape of the route it is sent on (see each route's ``error_body``).

    ``error_type`` is the service's type or status name (None: the route's usual one for ``status``);
    ``extra`` is merged into the error object last (Gemini ``details``, OpenRouter ``metadata``, Groq
    ``failed_generation``, a structured Mistral ``message``); ``variant`` picks an alternative shape where a
    service has two (vLLM ``"flat"``, Gemini ``"array"``).
    """

    status: int
    error_type: str | None
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    code: str | int | None = None
    param: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    variant: str | None = None


@dataclass(frozen=True)
class RawBodyReply:
    """Any status and bytes, e.g. a 200 whose body is not JSON."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


Reply = MessageReply | RawStreamReply | ErrorReply | RawBodyReply


def message(body: Mapping[str, Any], *, delay_s: float = 0.0, hold_open_s: float = 0.0) -> MessageReply:
    """A final answer given as the provider's non-streamed body (the wire builders make common ones)."""
    return MessageReply(body, delay_s, hold_open_s)


def raw_stream(
    events: Iterable[SseEvent],
    *,
    delay_s: float = 0.0,
    event_delay_s: float = 0.0,
    drop_after: int | None = None,
    hold_open_s: float = 0.0,
    content_type: str = SSE,
) -> RawStreamReply:
    """Send exactly ``events``; ``drop_after=N`` cuts the connection after N of them.

    ``content_type`` labels the stream (e.g. ``application/x-ndjson`` over SSE frames, a quirk some OpenAI
    proxies have); the frames are SSE-framed unless given as bytes.
    """
    return RawStreamReply(tuple(events), delay_s, event_delay_s, drop_after, hold_open_s, content_type)


def raw_ndjson(
    lines: Iterable[Mapping[str, Any] | str | bytes],
    *,
    delay_s: float = 0.0,
    event_delay_s: float = 0.0,
    drop_after: int | None = None,
    hold_open_s: float = 0.0,
) -> RawStreamReply:
    """Send exactly these NDJSON lines (objects are JSON-encoded, text gets its newline, bytes go as given)."""
    frames = tuple(line if isinstance(line, bytes) else ndjson_frame(line) for line in lines)
    return RawStreamReply(frames, delay_s, event_delay_s, drop_after, hold_open_s, NDJSON)


def error(
    status: int,
    *,
    message: str,
    error_type: str | None = None,
    code: str | int | None = None,
    param: str | None = None,
    extra: Mapping[str, Any] | None = None,
    variant: str | None = None,
    headers: Mapping[str, str] | None = None,
    delay_s: float = 0.0,
) -> ErrorReply:
    """An error answer in the shape of the route it is enqueued on (see ``ErrorReply``)."""
    return ErrorReply(
        status, error_type, message, dict(headers or {}), delay_s, code, param, dict(extra or {}), variant
    )


def raw_body(
    status: int,
    body: bytes,
    content_type: str = "application/json",
    *,
    headers: Mapping[str, str] | None = None,
    delay_s: float = 0.0,
) -> RawBodyReply:
    """Any status and body, sent as given."""
    return RawBodyReply(status, body, content_type, dict(headers or {}), delay_s)


# ---------------------------------------------------------------------------------------------------------
# Framing


def sse_frame(event: SseEvent) -> bytes:
    """One SSE event on the wire: ``data`` text, ``(event, data)``, or bytes as they are."""
    if isinstance(event, bytes):
        return event
    if isinstance(event, tuple):
        name, data = event
        return f"event: {name}\ndata: {data}\n\n".encode()
    return f"data: {event}\n\n".encode()


def ndjson_frame(line: Mapping[str, Any] | str) -> bytes:
    """One NDJSON line: an object JSON-encoded, or text as it is, ending in a newline."""
    text = line if isinstance(line, str) else json.dumps(line)
    return f"{text}\n".encode()


def pieces(text: str, parts: int = 3) -> list[str]:
    """``text`` cut into at most ``parts`` non-empty consecutive pieces (none for ""): streamed deltas."""
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]
