"""The Anthropic Messages wire (Claude, and Kimi's Anthropic-compatible endpoint): builders, the event
stream generated from a body, the route. Its request rules are in ``anthropic_rules``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from .anthropic_rules import IssuedThinking, anthropic_auth_problems, validate_anthropic_request
from .ids import serial, thought_signature
from .replies import ErrorReply, MessageReply, pieces, sse_frame
from .routes import Problem, RecordedRequest, Route, last_user_text, objects, token_estimate

CLAUDE_MODEL = "claude-sonnet-4-5"
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def anthropic_text(
    text: str,
    *,
    thinking: str | None = None,
    redacted_thinking: str | None = None,
    model: str = CLAUDE_MODEL,
    stop_reason: str = "end_turn",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """An Anthropic message with a text block, after a signed thinking block and/or a redacted_thinking
    block (``redacted_thinking`` is its opaque ``data``) if given."""
    body = _message_body(text, thinking, redacted_thinking, [], model, stop_reason, usage)
    return MessageReply(body, delay_s, hold_open_s)


def anthropic_tool_use(
    blocks: Iterable[tuple[str, str, Mapping[str, Any]]],
    *,
    text: str | None = None,
    thinking: str | None = None,
    redacted_thinking: str | None = None,
    model: str = CLAUDE_MODEL,
    stop_reason: str = "tool_use",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """An Anthropic message calling tools; ``blocks`` are ``(id, name, input_dict)``."""
    tool_uses = [{"type": "tool_use", "id": i, "name": n, "input": dict(inp)} for i, n, inp in blocks]
    body = _message_body(text, thinking, redacted_thinking, tool_uses, model, stop_reason, usage)
    return MessageReply(body, delay_s, hold_open_s)


def _message_body(
    text: str | None,
    thinking: str | None,
    redacted_thinking: str | None,
    tool_uses: list[dict[str, Any]],
    model: str,
    stop_reason: str,
    usage: tuple[int, int],
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": thought_signature()})
    if redacted_thinking is not None:
        content.append({"type": "redacted_thinking", "data": redacted_thinking})
    if text is not None:
        content.append({"type": "text", "text": text})
    return {
        "id": f"msg_fake_{serial()}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [*content, *tool_uses],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def anthropic_sse_events(body: Mapping[str, Any], *, whole_tool_input: bool = False) -> list[tuple[str, str]]:
    """The ``(event, data)`` pairs of the stream Anthropic would send for ``body``.

    message_start, ping, per block content_block_start / _delta... / _stop (tool_use starts with
    ``input: {}`` and streams input_json_delta fragments, or with ``whole_tool_input`` starts with the whole
    input and has no deltas, as Kimi's endpoint sometimes does; thinking ends with a signature_delta;
    redacted_thinking arrives whole at start), message_delta (stop_reason, usage), message_stop.
    """
    start = {**body, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {"input_tokens": body["usage"]["input_tokens"], "output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(body["content"]):
        empty, deltas = _block_parts(block, whole_tool_input)
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


def _block_parts(block: Mapping[str, Any], whole_tool_input: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A block's ``content_block`` at start and its deltas; other block types arrive whole at start."""
    kind = block["type"]
    if kind == "text":
        deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
        return {"content_block": {"type": "text", "text": ""}}, deltas
    if kind == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return {"content_block": {"type": "thinking", "thinking": ""}}, deltas
    if kind == "tool_use" and not whole_tool_input:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(json.dumps(block["input"]))]
        return {"content_block": start}, deltas
    return {"content_block": dict(block)}, []


class AnthropicRoute(Route):
    """``POST /<name>/v1/messages`` and ``GET /<name>/v1/models`` (base ``/<name>``): ``anthropic`` is Claude,
    ``kimi-anthropic`` Moonshot's Anthropic-compatible endpoint. Thinking blocks it hands out are
    remembered: one coming back altered, or with a signature it never issued, is refused."""

    chat_path = "/v1/messages"
    models_path = "/v1/models"
    ping_frame = b'event: ping\ndata: {"type": "ping"}\n\n'

    def __init__(self, name: str) -> None:
        models = ("kimi-k2.6", "kimi-k3") if name == "kimi-anthropic" else (CLAUDE_MODEL, "claude-opus-4-5")
        super().__init__(name, f"/{name}", models)
        self._issued = IssuedThinking()
        self._issued_lock = threading.Lock()

    def auth_problems(self, request: RecordedRequest) -> list[Problem]:
        return anthropic_auth_problems(request.headers)

    def validate(self, request: RecordedRequest) -> list[Problem]:
        with self._issued_lock:
            issued = self._issued.copy()
        return validate_anthropic_request(request.body, request.headers, issued=issued)

    def remember_issued(self, body: Mapping[str, Any]) -> None:
        with self._issued_lock:
            for block in objects(body.get("content")):
                if block.get("type") == "thinking":
                    self._issued.signatures[block["signature"]] = block["thinking"]
                elif block.get("type") == "redacted_thinking":
                    self._issued.redacted.add(block["data"])

    def forget_issued(self) -> None:
        with self._issued_lock:
            self._issued = IssuedThinking()

    def error_body(self, error: ErrorReply) -> Any:
        if error.variant is not None:
            raise ValueError(f"the Anthropic error shape has no variant {error.variant!r}")
        server_default = "api_error" if error.status >= 500 else "invalid_request_error"
        inner = {"type": error.error_type or _ERROR_TYPES.get(error.status, server_default), "message": error.message}
        return {"type": "error", "error": inner | dict(error.extra), "request_id": "req_fake"}

    def stream_frames(self, body: Mapping[str, Any], request: RecordedRequest) -> list[bytes]:
        return [sse_frame(event) for event in anthropic_sse_events(body)]

    def echo_reply(self, request: RecordedRequest) -> MessageReply:
        messages = request.body["messages"]
        answer = f"echo: {last_user_text(messages)}"
        usage = (token_estimate(messages), len(answer.split()))
        return anthropic_text(answer, model=request.body["model"], usage=usage)

    def model_list_body(self) -> Any:
        data = [
            {"type": "model", "id": model, "display_name": model, "created_at": "2025-09-29T00:00:00Z"}
            for model in self.models
        ]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return {"data": data, "has_more": False, "first_id": first, "last_id": last}
