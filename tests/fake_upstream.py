"""A scripted loopback server that speaks Moonshot Kimi's and Anthropic's wire formats.

Mocks (respx, ``httpx.MockTransport``) cannot show what only real sockets do: SSE split across reads, a
slow first byte, a connection cut mid-stream, a client that hangs up. This fake is a real HTTP/1.1 server
on 127.0.0.1 (ephemeral port, one daemon thread per connection). Adapter tests use it in-process through
httpx, end-to-end tests point the ``colibri-router`` process at it through env vars, benchmarks load it.

Routes::

    POST {fake.kimi_base_url}/chat/completions     Kimi, OpenAI-style   (kimi_base_url = {url}/kimi/v1)
    POST {fake.anthropic_base_url}/v1/messages     Anthropic Messages   (anthropic_base_url = {url}/anthropic)

Scripting: each route has a FIFO queue (``fake.kimi.enqueue(...)``, ``fake.anthropic.enqueue(...)``);
when it is empty the route answers ``echo: <last user text>``. Reply kinds, built by functions:

- ``message(body)`` and the builders ``kimi_text``, ``kimi_tool_calls``, ``anthropic_text``,
  ``anthropic_tool_use``: a final answer given as the provider's non-streamed body. It is sent as JSON, or,
  when the request says ``"stream": true``, as the SSE stream generated from it by ``kimi_sse_events`` /
  ``anthropic_sse_events`` (public, so tests can build and tamper with raw event lists).
- ``raw_stream(events, event_delay_s=..., drop_after=N)``: exactly these SSE events; ``drop_after`` closes
  the connection after N events without the chunked terminator (httpx raises ``RemoteProtocolError``).
- ``error(status, error_type=..., message=..., headers=...)``: the route's error shape.
- ``raw_body(status, body, content_type)``: anything at all, e.g. a malformed 200.

Every kind takes ``delay_s`` (wait before the first byte); streams take ``hold_open_s`` (an SSE ping every
50 ms for that long before the first event). ``fake.latency_s`` adds a wait before every reply. Every wait
and write notices a client that hangs up and records it in ``fake.disconnects`` (see ``wait_disconnect``).

Validation: each request is checked like the real service checks it (``validate_kimi_request``,
``validate_anthropic_request``, usable without HTTP too). A violation is answered 401/400 in the provider's
error shape, does not consume a scripted reply, and is appended to ``fake.violations``.

Example::

    with FakeUpstream() as fake:  # or the `fake_upstream` fixture
        fake.kimi.enqueue(
            error(429, error_type="engine_overloaded_error", message="busy", headers={"Retry-After": "1"}),
            kimi_tool_calls([("functions.read:0", "read", '{"path": "a.txt"}')]),
        )
        ...  # point the code under test at fake.kimi_base_url
        assert fake.violations == []
        assert len(fake.kimi.requests) == 2
"""

from __future__ import annotations

import abc
import contextlib
import functools
import itertools
import json
import re
import selectors
import socket
import socketserver
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import urlsplit

KIMI_MODEL = "kimi-k2-0905-preview"
CLAUDE_MODEL = "claude-sonnet-4-5"
ANTHROPIC_VERSION = "2023-06-01"
_TICK_S = 0.05  # granularity of every wait, and the ping interval of held-open streams
_ids = itertools.count(1)

# ---------------------------------------------------------------------------------------------------------
# Reply kinds

SseEvent = str | tuple[str, str] | bytes
"""An SSE event for ``raw_stream``: ``data`` text, ``(event, data)``, or bytes sent verbatim."""


@dataclass(frozen=True)
class MessageReply:
    """A final answer in the provider's non-streamed body shape; streamed on request."""

    body: Mapping[str, Any]
    delay_s: float = 0.0
    hold_open_s: float = 0.0

    def _send(self, ex: _Exchange, stream: bool) -> None:
        if not stream:  # a JSON answer has nowhere to put pings: holding it open is just more delay
            if ex.wait(self.delay_s + self.hold_open_s):
                ex.send_json(200, self.body)
        elif ex.wait(self.delay_s):
            ex.stream(ex.route.sse_frames(self.body), hold_open_s=self.hold_open_s)


@dataclass(frozen=True)
class RawStreamReply:
    """Exactly these SSE events, whatever the request asked for."""

    events: Sequence[SseEvent]
    delay_s: float = 0.0
    event_delay_s: float = 0.0
    drop_after: int | None = None
    hold_open_s: float = 0.0

    def _send(self, ex: _Exchange, stream: bool) -> None:
        if ex.wait(self.delay_s):
            frames = [sse_frame(event) for event in self.events]
            ex.stream(
                frames, hold_open_s=self.hold_open_s, event_delay_s=self.event_delay_s, drop_after=self.drop_after
            )


@dataclass(frozen=True)
class ErrorReply:
    """An error in the route's shape (Moonshot's or Anthropic's)."""

    status: int
    error_type: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    def _send(self, ex: _Exchange, stream: bool) -> None:
        if ex.wait(self.delay_s):
            ex.send_json(self.status, ex.route.error_body(self.error_type, self.message), self.headers)


@dataclass(frozen=True)
class RawBodyReply:
    """Any status and bytes, e.g. a 200 whose body is not JSON."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    def _send(self, ex: _Exchange, stream: bool) -> None:
        if ex.wait(self.delay_s):
            ex.send(self.status, self.body, self.content_type, self.headers)


Reply = MessageReply | RawStreamReply | ErrorReply | RawBodyReply


def message(body: Mapping[str, Any], *, delay_s: float = 0.0, hold_open_s: float = 0.0) -> MessageReply:
    """A final answer given as the provider's non-streamed body (use the builders below for common ones)."""
    return MessageReply(body, delay_s, hold_open_s)


def raw_stream(
    events: Iterable[SseEvent],
    *,
    delay_s: float = 0.0,
    event_delay_s: float = 0.0,
    drop_after: int | None = None,
    hold_open_s: float = 0.0,
) -> RawStreamReply:
    """Send exactly ``events``; ``drop_after=N`` cuts the connection after N of them."""
    return RawStreamReply(tuple(events), delay_s, event_delay_s, drop_after, hold_open_s)


def error(
    status: int,
    *,
    error_type: str,
    message: str,
    headers: Mapping[str, str] | None = None,
    delay_s: float = 0.0,
) -> ErrorReply:
    """An error answer in the shape of the route it is enqueued on."""
    return ErrorReply(status, error_type, message, dict(headers or {}), delay_s)


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
# Builders of provider bodies


def kimi_text(
    text: str,
    *,
    model: str = KIMI_MODEL,
    finish_reason: str = "stop",
    reasoning: str | None = None,
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A Kimi chat.completion with a text answer (and ``reasoning_content`` for thinking models)."""
    msg = {"role": "assistant", "content": text}
    return MessageReply(_kimi_body(msg, reasoning, model, finish_reason, usage), delay_s, hold_open_s)


def kimi_tool_calls(
    calls: Iterable[tuple[str, str, str]],
    *,
    text: str | None = None,
    reasoning: str | None = None,
    model: str = KIMI_MODEL,
    finish_reason: str = "tool_calls",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A Kimi chat.completion calling tools; ``calls`` are ``(id, name, arguments_json_text)``.

    Without ``text`` the content is ``""``, as Moonshot sends it (and refuses it when sent back).
    """
    tool_calls = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in calls
    ]
    msg = {"role": "assistant", "content": text or "", "tool_calls": tool_calls}
    return MessageReply(_kimi_body(msg, reasoning, model, finish_reason, usage), delay_s, hold_open_s)


def _kimi_body(
    msg: dict[str, Any], reasoning: str | None, model: str, finish_reason: str, usage: tuple[int, int]
) -> dict[str, Any]:
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    prompt, completion = usage
    return {
        "id": f"chatcmpl-fake-{next(_ids)}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def anthropic_text(
    text: str,
    *,
    thinking: str | None = None,
    model: str = CLAUDE_MODEL,
    stop_reason: str = "end_turn",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """An Anthropic message with a text block (after a signed thinking block if ``thinking`` is given)."""
    return MessageReply(_anthropic_body(text, thinking, [], model, stop_reason, usage), delay_s, hold_open_s)


def anthropic_tool_use(
    blocks: Iterable[tuple[str, str, Mapping[str, Any]]],
    *,
    text: str | None = None,
    thinking: str | None = None,
    model: str = CLAUDE_MODEL,
    stop_reason: str = "tool_use",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """An Anthropic message calling tools; ``blocks`` are ``(id, name, input_dict)``."""
    tool_uses = [{"type": "tool_use", "id": i, "name": n, "input": dict(inp)} for i, n, inp in blocks]
    body = _anthropic_body(text, thinking, tool_uses, model, stop_reason, usage)
    return MessageReply(body, delay_s, hold_open_s)


def _anthropic_body(
    text: str | None,
    thinking: str | None,
    tool_uses: list[dict[str, Any]],
    model: str,
    stop_reason: str,
    usage: tuple[int, int],
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": f"sig-fake-{next(_ids)}"})
    if text is not None:
        content.append({"type": "text", "text": text})
    return {
        "id": f"msg_fake_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [*content, *tool_uses],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


# ---------------------------------------------------------------------------------------------------------
# Streams generated from a non-streamed body


def kimi_sse_events(body: Mapping[str, Any]) -> list[str]:
    """The ``data:`` payloads of the chat.completion.chunk stream Kimi would send for ``body``.

    Role chunk, reasoning deltas, content deltas, per tool call one chunk with index/id/name and then the
    arguments in fragments, a finish chunk, a usage chunk (no choices), ``[DONE]``.
    """
    choice = body["choices"][0]
    msg = choice["message"]
    head = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        return json.dumps({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": p}) for p in _pieces(msg.get("reasoning_content") or "")]
    events += [chunk({"content": p}) for p in _pieces(msg.get("content") or "")]
    for index, call in enumerate(msg.get("tool_calls") or []):
        function = call["function"]
        named = {"name": function["name"], "arguments": ""}
        events.append(
            chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function", "function": named}]})
        )
        fragments = _pieces(function["arguments"])
        events += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in fragments]
    events.append(chunk({}, choice["finish_reason"]))
    events.append(json.dumps({**head, "choices": [], "usage": body["usage"]}))
    events.append("[DONE]")
    return events


def anthropic_sse_events(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(event, data)`` pairs of the stream Anthropic would send for ``body``.

    message_start, ping, per block content_block_start / _delta... / _stop (tool_use starts with
    ``input: {}`` and streams input_json_delta fragments; thinking ends with a signature_delta),
    message_delta (stop_reason, usage), message_stop.
    """
    start = {**body, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {"input_tokens": body["usage"]["input_tokens"], "output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(body["content"]):
        empty, deltas = _anthropic_block_parts(block)
        events.append(("content_block_start", {"type": "content_block_start", "index": index, **empty}))
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}) for delta in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": body.get("stop_sequence")}
    usage = {"output_tokens": body["usage"]["output_tokens"]}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return [(name, json.dumps(data)) for name, data in events]


def _anthropic_block_parts(block: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A block's ``content_block`` at start and its deltas; unknown block types arrive whole at start."""
    kind = block["type"]
    if kind == "text":
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        return {"content_block": {"type": "text", "text": ""}}, deltas
    if kind == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return {"content_block": {"type": "thinking", "thinking": ""}}, deltas
    if kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(json.dumps(block["input"]))]
        return {"content_block": start}, deltas
    return {"content_block": dict(block)}, []


def _pieces(text: str, parts: int = 3) -> list[str]:
    """``text`` cut into at most ``parts`` non-empty consecutive pieces (none for "")."""
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse_frame(event: SseEvent) -> bytes:
    """One SSE event on the wire: ``data`` text, ``(event, data)``, or bytes as they are."""
    if isinstance(event, bytes):
        return event
    if isinstance(event, tuple):
        name, data = event
        return f"event: {name}\ndata: {data}\n\n".encode()
    return f"data: {event}\n\n".encode()


# ---------------------------------------------------------------------------------------------------------
# Wire validation, as the real services do it


_K2_ID = re.compile(r"^functions\.(?P<name>.+):(?P<index>\d+)$")
_CLAUDE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_KIMI_ROLES = {"system", "user", "assistant", "tool"}
_ANTHROPIC_TOOL_CHOICES = {"auto", "any", "tool", "none"}


def validate_kimi_request(body: Any, headers: Mapping[str, str] | None = None, *, strict_ids: bool = True) -> list[str]:
    """Why Moonshot would refuse this chat-completions request; ``[]`` if it would accept it.

    ``headers=None`` skips the header checks. ``strict_ids`` requires K2's own ``functions.{name}:{idx}``
    tool-call IDs with conversation-unique indices; without it any non-empty ID passes, as on Moonshot.
    """
    problems = _kimi_auth_problems(headers) if headers is not None else []
    if not isinstance(body, dict):
        return [*problems, "request body must be a JSON object"]
    model = body.get("model")
    if not isinstance(model, str) or not model:
        problems.append("model is required")
    if "max_completion_tokens" in body:
        problems.append("max_completion_tokens is not supported, use max_tokens")
    problems += _temperature_problems(body)
    if body.get("tool_choice", "auto") not in ("auto", "none", None):
        problems.append(f"tool_choice {body['tool_choice']!r} is not supported, use 'auto' or 'none'")
    if len(body.get("tools") or []) > 128:
        problems.append("too many tools: at most 128 are allowed")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages must be a non-empty list"]
    thinking = isinstance(model, str) and "thinking" in model
    call_ids: set[str] = set()
    call_indices: set[int] = set()
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in _KIMI_ROLES:
            problems.append(f"messages[{i}]: role must be one of {sorted(_KIMI_ROLES)}")
        elif msg["role"] == "assistant" and msg.get("tool_calls"):
            if msg.get("content") == "":
                problems.append(f"messages[{i}]: text content is empty in an assistant tool call message")
            if thinking and not msg.get("reasoning_content"):
                problems.append(
                    f"thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"
                )
            problems += _kimi_call_problems(i, msg["tool_calls"], strict_ids, call_ids, call_indices)
        elif msg["role"] == "tool":
            if msg.get("tool_call_id") not in call_ids:
                problems.append(f"messages[{i}]: tool_call_id {msg.get('tool_call_id')!r} matches no earlier call")
            if not msg.get("content"):
                problems.append(f"messages[{i}]: tool message content must not be empty")
    return problems


def _kimi_auth_problems(headers: Mapping[str, str]) -> list[str]:
    authorization = _lower_keys(headers).get("authorization", "")
    if not re.fullmatch(r"Bearer \S+", authorization):
        return ["Invalid Authentication: missing 'Authorization: Bearer <key>' header"]
    return []


def _kimi_call_problems(i: int, calls: Any, strict_ids: bool, call_ids: set[str], call_indices: set[int]) -> list[str]:
    """Problems of one assistant message's ``tool_calls``; records their IDs and indices as seen."""
    if not isinstance(calls, list):
        return [f"messages[{i}]: tool_calls must be a list"]
    problems = []
    for call in calls:
        if not isinstance(call, dict):
            problems.append(f"messages[{i}]: a tool call must be an object")
            continue
        function = call["function"] if isinstance(call.get("function"), dict) else {}
        call_id, name = call.get("id"), function.get("name")
        if not isinstance(call_id, str) or not call_id:
            problems.append(f"messages[{i}]: a tool call needs an id")
            continue
        call_ids.add(call_id)
        if not isinstance(name, str) or not name or not isinstance(function.get("arguments"), str):
            problems.append(f"messages[{i}]: a tool call needs function.name and function.arguments (a string)")
            continue
        if not strict_ids:
            continue
        match = _K2_ID.match(call_id)
        if match is None or match["name"] != name:
            problems.append(f"messages[{i}]: tool call id {call_id!r} is not 'functions.{name}:<index>'")
        elif int(match["index"]) in call_indices:
            problems.append(f"messages[{i}]: tool call index in {call_id!r} is already used in the conversation")
        else:
            call_indices.add(int(match["index"]))
    return problems


def validate_anthropic_request(body: Any, headers: Mapping[str, str] | None = None) -> list[str]:
    """Why Anthropic would refuse this Messages request; ``[]`` if it would accept it.

    ``headers=None`` skips the header checks (x-api-key, anthropic-version).
    """
    problems = []
    if headers is not None:
        problems += _anthropic_auth_problems(headers)
        if _lower_keys(headers).get("anthropic-version") != ANTHROPIC_VERSION:
            problems.append(f"anthropic-version: header is required ({ANTHROPIC_VERSION})")
    if not isinstance(body, dict):
        return [*problems, "request body must be a JSON object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        problems.append("max_tokens: must be an integer >= 1")
    problems += _temperature_problems(body)
    problems += _anthropic_tool_choice_problems(body.get("tool_choice"))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages: must be a non-empty list"]
    problems += _anthropic_message_problems(messages)
    if _has_tool_blocks(messages) and not body.get("tools"):
        problems.append("tools: must be given when messages contain tool_use or tool_result blocks")
    return problems


def _anthropic_auth_problems(headers: Mapping[str, str]) -> list[str]:
    return [] if _lower_keys(headers).get("x-api-key") else ["x-api-key header is required"]


def _anthropic_tool_choice_problems(choice: Any) -> list[str]:
    if choice is None:
        return []
    if not isinstance(choice, dict) or choice.get("type") not in _ANTHROPIC_TOOL_CHOICES:
        return [f"tool_choice: must be an object with type in {sorted(_ANTHROPIC_TOOL_CHOICES)}"]
    if choice["type"] == "tool" and not choice.get("name"):
        return ["tool_choice.name: Field required"]
    return []


def _anthropic_message_problems(messages: list[Any]) -> list[str]:
    """Role alternation and the pairing of every tool_use with a tool_result in the next message."""
    problems = []
    seen_ids: set[str] = set()
    pending: set[str] = set()  # tool_use IDs of the previous assistant message, to answer now
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "system":
            problems.append(f"messages.{i}: role 'system' is not allowed, use the top-level system parameter")
            continue
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            problems.append(f"messages.{i}: roles must alternate user/assistant starting with user")
            continue
        blocks = _blocks(msg.get("content"))
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        if role == "user":
            problems += [
                f"messages.{i}: tool_result {rid!r} has no tool_use in the previous message"
                for rid in results
                if rid not in pending
            ]
            if pending - set(results):
                problems.append(f"messages.{i}: tool_use ids {sorted(pending - set(results))} have no tool_result")
            kinds = [b.get("type") for b in blocks]
            if results and kinds[: len(results)] != ["tool_result"] * len(results):
                problems.append(f"messages.{i}: tool_result blocks must come first in the content")
            pending = set()
        else:
            if results:
                problems.append(f"messages.{i}: tool_result blocks are only allowed in user messages")
            for use_id in uses:
                if not isinstance(use_id, str) or not _CLAUDE_ID.match(use_id):
                    problems.append(f"messages.{i}: tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
                    continue
                if use_id in seen_ids:
                    problems.append(f"messages.{i}: tool_use ids must be unique, {use_id!r} is repeated")
                seen_ids.add(use_id)
            pending = {u for u in uses if isinstance(u, str)}
    if pending:
        problems.append(f"messages: tool_use ids {sorted(pending)} have no tool_result after them")
    return problems


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _has_tool_blocks(messages: list[Any]) -> bool:
    return any(
        block.get("type") in ("tool_use", "tool_result")
        for msg in messages
        if isinstance(msg, dict)
        for block in _blocks(msg.get("content"))
    )


def _temperature_problems(body: Mapping[str, Any]) -> list[str]:
    temperature = body.get("temperature")
    if temperature is None or (isinstance(temperature, int | float) and 0 <= temperature <= 1):
        return []
    return [f"temperature {temperature!r} is out of range [0, 1]"]


def _lower_keys(headers: Mapping[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


# ---------------------------------------------------------------------------------------------------------
# Routes


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it; ``body`` is the parsed JSON, or None if it was not JSON."""

    route: str  # "kimi", "anthropic", or "" for an unknown path
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any
    raw: bytes
    at: float  # time.monotonic() on arrival


@dataclass(frozen=True)
class Disconnect:
    """A client that hung up while the fake was still answering it."""

    route: str
    path: str
    at: float  # time.monotonic() when the fake noticed


class Route(abc.ABC):
    """One provider endpoint: its reply queue, its requests, and its wire dialect."""

    name: ClassVar[str]
    path: ClassVar[str]
    auth_error_type: ClassVar[str]
    ping_frame: ClassVar[bytes]

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._requests.clear()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.echo_reply(_last_user_text(body.get("messages")), body)

    def check(self, body: Any, headers: dict[str, str]) -> tuple[int, str, list[str]] | None:
        """``(status, error_type, problems)`` if the request must be refused."""
        if auth := self.auth_problems(headers):
            return 401, self.auth_error_type, auth
        if problems := self.validate(body, headers):
            return 400, "invalid_request_error", problems
        return None

    @abc.abstractmethod
    def auth_problems(self, headers: dict[str, str]) -> list[str]: ...

    @abc.abstractmethod
    def validate(self, body: Any, headers: dict[str, str]) -> list[str]: ...

    @abc.abstractmethod
    def error_body(self, error_type: str, message: str) -> dict[str, Any]: ...

    @abc.abstractmethod
    def sse_frames(self, body: Mapping[str, Any]) -> list[bytes]: ...

    @abc.abstractmethod
    def echo_reply(self, text: str, body: dict[str, Any]) -> MessageReply: ...


class KimiRoute(Route):
    """``POST /kimi/v1/chat/completions``; set ``strict_ids = False`` to accept any tool-call ID."""

    name = "kimi"
    path = "/kimi/v1/chat/completions"
    auth_error_type = "invalid_authentication_error"
    ping_frame = b": ping\n\n"
    strict_ids = True

    def auth_problems(self, headers: dict[str, str]) -> list[str]:
        return _kimi_auth_problems(headers)

    def validate(self, body: Any, headers: dict[str, str]) -> list[str]:
        return validate_kimi_request(body, headers, strict_ids=self.strict_ids)

    def error_body(self, error_type: str, message: str) -> dict[str, Any]:
        return {"error": {"type": error_type, "message": message}}

    def sse_frames(self, body: Mapping[str, Any]) -> list[bytes]:
        return [sse_frame(data) for data in kimi_sse_events(body)]

    def echo_reply(self, text: str, body: dict[str, Any]) -> MessageReply:
        answer = f"echo: {text}"
        return kimi_text(answer, model=body["model"], usage=(_token_estimate(body), len(answer.split())))


class AnthropicRoute(Route):
    """``POST /anthropic/v1/messages``."""

    name = "anthropic"
    path = "/anthropic/v1/messages"
    auth_error_type = "authentication_error"
    ping_frame = b'event: ping\ndata: {"type": "ping"}\n\n'

    def auth_problems(self, headers: dict[str, str]) -> list[str]:
        return _anthropic_auth_problems(headers)

    def validate(self, body: Any, headers: dict[str, str]) -> list[str]:
        return validate_anthropic_request(body, headers)

    def error_body(self, error_type: str, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": error_type, "message": message}, "request_id": "req_fake"}

    def sse_frames(self, body: Mapping[str, Any]) -> list[bytes]:
        return [sse_frame(event) for event in anthropic_sse_events(body)]

    def echo_reply(self, text: str, body: dict[str, Any]) -> MessageReply:
        answer = f"echo: {text}"
        return anthropic_text(answer, model=body["model"], usage=(_token_estimate(body), len(answer.split())))


def _last_user_text(messages: Any) -> str:
    """The text of the last user message: a string, or its text parts joined (both wire formats)."""
    for msg in reversed(messages or []):
        if msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, str):
                return content
            return "".join(p.get("text", "") for p in _blocks(content) if p.get("type") == "text")
    return ""


def _token_estimate(body: Mapping[str, Any]) -> int:
    return 1 + len(json.dumps(body.get("messages"))) // 4


# ---------------------------------------------------------------------------------------------------------
# The server


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
        self.anthropic = AnthropicRoute()
        self._routes: dict[str, Route] = {self.kimi.path: self.kimi, self.anthropic.path: self.anthropic}
        self._server = _Server((host, port), self)
        # A short poll interval: stop() waits for the accept loop to poll once.
        serve = functools.partial(self._server.serve_forever, poll_interval=0.01)
        self._thread = threading.Thread(target=serve, name="fake-upstream", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self._server.server_name}:{self._server.server_port}"

    @property
    def kimi_base_url(self) -> str:
        return f"{self.url}/kimi/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"{self.url}/anthropic"

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
        """Forget scripted replies and recordings; settings (latency_s, strict_ids) stay."""
        for route in self._routes.values():
            route._clear()
        with self._lock:
            self._requests.clear()
            self._violations.clear()
            self._disconnects.clear()

    def _serve(self, handler: _Handler) -> None:
        path = urlsplit(handler.path).path
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        route = self._routes.get(path)
        headers = {name.lower(): value for name, value in handler.headers.items()}
        request = RecordedRequest(
            route.name if route else "", handler.command, path, headers, body, raw, time.monotonic()
        )
        with self._lock:
            self._requests.append(request)
        if route is None:  # a wrong base URL: answer like a web server would, and say so in violations
            self._violate(f"unknown route {handler.command} {path}")
            handler.send_error(404, f"no route {path}")
            return
        route._record(request)
        ex = _Exchange(self, handler, route, path)
        if not ex.wait(self.latency_s):
            return
        if refusal := route.check(body, headers):
            status, error_type, problems = refusal
            for problem in problems:
                self._violate(f"{route.name}: {problem}")
            ex.send_json(status, route.error_body(error_type, problems[0]))
            return
        route._next_reply(body)._send(ex, stream=body.get("stream") is True)

    def _violate(self, problem: str) -> None:
        with self._lock:
            self._violations.append(problem)

    def _record_disconnect(self, route: str, path: str) -> None:
        with self._disconnected:
            self._disconnects.append(Disconnect(route, path, time.monotonic()))
            self._disconnected.notify_all()


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
        hold_open_s: float = 0.0,
        event_delay_s: float = 0.0,
        drop_after: int | None = None,
    ) -> None:
        """Send SSE frames as HTTP chunks: pings while held open, then the frames, then the terminator."""
        sse_headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        self._head(200, {**sse_headers, "Transfer-Encoding": "chunked"})
        deadline = time.monotonic() + hold_open_s
        while (left := deadline - time.monotonic()) > 0:
            if not (self._chunk(self.route.ping_frame) and self.wait(min(left, _TICK_S))):
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
        except ValueError:  # e.g. Anthropic's 529
            reason = "Overloaded" if status == 529 else "Unknown"
        self.handler.send_response(status, reason)
        for name, value in headers.items():
            self.handler.send_header(name, value)
        try:
            self.handler.end_headers()
        except OSError:
            self._hung_up()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked streams
    # The head and every SSE chunk are separate small writes; with Nagle's algorithm each write after
    # an unacknowledged one waits for the client's delayed ACK (~40 ms). Real upstreams don't stall so.
    disable_nagle_algorithm = True
    server: _Server

    def do_POST(self) -> None:
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
