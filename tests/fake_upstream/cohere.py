"""The Cohere v2 chat wire: builders, the named-event SSE stream generated from a body, rules, the route.

``POST /cohere/v2/chat`` (streams when the body says ``"stream": true``), ``GET /cohere/v1/models``.
Refused: a missing bearer key (401), roles other than system/user/assistant/tool, tool messages that do
not answer the preceding assistant ``tool_calls`` (OpenAI's pairing rule), ``tool_choice`` other than
``REQUIRED``/``NONE``. Errors are flat: ``{"message": ...}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .ids import serial
from .media_rules import cohere_media_problems
from .openai_family_rules import tool_pairing_problems
from .replies import ErrorReply, MessageReply, pieces, sse_frame
from .routes import Problem, RecordedRequest, Route, has_bearer, last_user_text, one_of, token_estimate
from .structured_rules import cohere_output_problems

COHERE_MODEL = "command-a-03-2025"
COHERE_ROLES = frozenset({"system", "user", "assistant", "tool"})
COHERE_TOOL_CHOICES = frozenset({"REQUIRED", "NONE"})


def cohere_text(
    text: str,
    *,
    thinking: str | None = None,
    finish_reason: str = "COMPLETE",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A v2 chat response with a text answer, after a thinking item if ``thinking`` is given."""
    message = {"role": "assistant", "content": [*_thinking(thinking), {"type": "text", "text": text}]}
    return MessageReply(_chat_body(message, finish_reason, usage), delay_s, hold_open_s)


def cohere_tool_calls(
    calls: Iterable[tuple[str, str, str]],
    *,
    tool_plan: str | None = None,
    thinking: str | None = None,
    finish_reason: str = "TOOL_CALL",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A v2 chat response calling tools; ``calls`` are ``(id, name, arguments_json_text)`` (IDs:
    ``cohere_call_id(name)``); ``tool_plan`` is the model's narration before the calls."""
    tool_calls = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in calls
    ]
    message: dict[str, Any] = {"role": "assistant", "tool_calls": tool_calls}
    if tool_plan is not None:
        message["tool_plan"] = tool_plan
    if thinking is not None:
        message["content"] = _thinking(thinking)
    return MessageReply(_chat_body(message, finish_reason, usage), delay_s, hold_open_s)


def _thinking(thinking: str | None) -> list[dict[str, Any]]:
    return [] if thinking is None else [{"type": "thinking", "thinking": thinking}]


def _chat_body(message: dict[str, Any], finish_reason: str, usage: tuple[int, int]) -> dict[str, Any]:
    prompt, completion = usage
    counts = {"input_tokens": prompt, "output_tokens": completion}
    return {
        "id": f"cohere-fake-{serial()}",
        "finish_reason": finish_reason,
        "message": message,
        "usage": {"billed_units": dict(counts), "tokens": dict(counts)},
    }


def cohere_sse_events(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(event, data)`` pairs Cohere would stream for ``body``; each data has ``"type": <event>``.

    message-start, per content item content-start / content-delta... / content-end (``text`` or
    ``thinking``), tool-plan-delta..., per tool call tool-call-start (``delta.message.tool_calls`` is ONE
    object, arguments ``""``) / tool-call-delta... (argument fragments) / tool-call-end, and message-end
    with ``delta.finish_reason`` and ``delta.usage``.
    """
    message = body["message"]
    events: list[dict[str, Any]] = [
        {"type": "message-start", "id": body["id"], "delta": {"message": {"role": "assistant", "content": [],
                                                                           "tool_plan": "", "tool_calls": [],
                                                                           "citations": []}}},
    ]  # fmt: skip
    for index, item in enumerate(message.get("content") or []):
        kind = item["type"]  # "text" or "thinking": the field that carries it has the same name
        events.append(
            {"type": "content-start", "index": index, "delta": {"message": {"content": {"type": kind, kind: ""}}}}
        )
        events += [
            {"type": "content-delta", "index": index, "delta": {"message": {"content": {kind: piece}}}}
            for piece in pieces(item[kind])
        ]
        events.append({"type": "content-end", "index": index})
    events += [
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}}
        for p in pieces(message.get("tool_plan") or "")
    ]
    for index, call in enumerate(message.get("tool_calls") or []):
        start = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        events.append({"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": start}}})
        events += [
            {
                "type": "tool-call-delta",
                "index": index,
                "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}},
            }
            for p in pieces(call["function"]["arguments"])
        ]
        events.append({"type": "tool-call-end", "index": index})
    events.append({"type": "message-end", "delta": {"finish_reason": body["finish_reason"], "usage": body["usage"]}})
    return [(event["type"], json.dumps(event)) for event in events]


def validate_cohere_request(body: Any, headers: Mapping[str, str] | None = None) -> list[Problem]:
    """Why Cohere would refuse this v2 chat request; ``[]`` if it would accept it (``headers=None``: no
    key check)."""
    problems = cohere_auth_problems(headers) if headers is not None else []
    if not isinstance(body, dict):
        return [*problems, Problem("invalid request: the body must be a JSON object")]
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append(Problem("invalid request: model must be a non-empty string"))
    choice = body.get("tool_choice")
    if choice is not None and not one_of(choice, COHERE_TOOL_CHOICES):
        problems.append(Problem(f"invalid request: tool_choice must be one of REQUIRED, NONE, got {choice!r}"))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, Problem("invalid request: messages must be a non-empty list")]
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not one_of(msg.get("role"), COHERE_ROLES):
            problems.append(Problem(f"invalid request: messages[{i}].role must be one of {sorted(COHERE_ROLES)}"))
        elif msg["role"] == "tool" and not isinstance(msg.get("tool_call_id"), str):
            problems.append(Problem(f"invalid request: messages[{i}].tool_call_id is required"))
    problems += cohere_media_problems(body)
    problems += cohere_output_problems(body)
    if problems:
        return problems
    return [Problem(f"invalid request: {problem}") for problem in tool_pairing_problems(messages)]


def cohere_auth_problems(headers: Mapping[str, str]) -> list[Problem]:
    return [] if has_bearer(headers) else [Problem("no api key supplied", status=401)]


class CohereRoute(Route):
    """Cohere under ``/cohere``."""

    chat_path = "/v2/chat"
    models_path = "/v1/models"
    ping_frame = None

    def __init__(self) -> None:
        super().__init__("cohere", "/cohere", (COHERE_MODEL, "command-a-plus-05-2026", "command-r7b-12-2024"))

    def auth_problems(self, request: RecordedRequest) -> list[Problem]:
        return cohere_auth_problems(request.headers)

    def validate(self, request: RecordedRequest) -> list[Problem]:
        return validate_cohere_request(request.body)

    def error_body(self, error: ErrorReply) -> Any:
        """Flat: ``{"message": ...}`` plus ``extra`` (e.g. ``id``)."""
        if error.variant is not None:
            raise ValueError(f"the Cohere error shape has no variant {error.variant!r}")
        return {"message": error.message, **error.extra}

    def stream_frames(self, body: Mapping[str, Any], request: RecordedRequest) -> list[bytes]:
        return [sse_frame(event) for event in cohere_sse_events(body)]

    def echo_reply(self, request: RecordedRequest) -> MessageReply:
        messages = request.body["messages"]
        answer = f"echo: {last_user_text(messages)}"
        return cohere_text(answer, usage=(token_estimate(messages), len(answer.split())))

    def model_list_body(self) -> Any:
        return {"models": [{"name": model, "endpoints": ["chat"], "context_length": 256000} for model in self.models]}
