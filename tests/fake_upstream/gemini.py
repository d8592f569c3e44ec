"""The Gemini generateContent wire: builders, the SSE stream generated from a body, the route.

Paths (base ``/gemini/v1beta``): ``POST {base}/models/{model}:generateContent`` (JSON),
``POST {base}/models/{model}:streamGenerateContent?alt=sse`` (SSE: one GenerateContentResponse per
``data:`` event, cumulative ``usageMetadata`` on each, ``finishReason`` on the last, no terminator; without
``alt=sse`` a JSON array, as Gemini sends it, and a violation), ``GET {base}/models``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from .gemini_rules import IssuedParts, gemini_auth_problems, validate_gemini_request
from .ids import gemini_call_id, serial, thought_signature
from .replies import ErrorReply, MessageReply, pieces, sse_frame
from .routes import Endpoint, Problem, RecordedRequest, Route, last_user_text, objects, token_estimate

GEMINI_MODEL = "gemini-3.5-flash"
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_PATH_METHODS = (":generateContent", ":streamGenerateContent")


def gemini_text(
    text: str,
    *,
    thought: str | None = None,
    signature: bool = False,
    model: str = GEMINI_MODEL,
    finish_reason: str = "STOP",
    usage: tuple[int, int] = (20, 10),
    thoughts_tokens: int = 0,
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A GenerateContentResponse with a text answer, after a thought summary part if ``thought`` is given;
    ``signature`` puts a fresh thoughtSignature on the text part (Gemini 3 signs some text answers)."""
    text_part: dict[str, Any] = {"text": text}
    if signature:
        text_part["thoughtSignature"] = thought_signature()
    parts = [*_thought_parts(thought), text_part]
    body = _response_body(parts, model, finish_reason, usage, thoughts_tokens)
    return MessageReply(body, delay_s, hold_open_s)


def gemini_tool_calls(
    calls: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    text: str | None = None,
    thought: str | None = None,
    ids: bool = False,
    signatures: bool = False,
    signed_empty_part: bool = False,
    model: str = GEMINI_MODEL,
    finish_reason: str = "STOP",
    usage: tuple[int, int] = (20, 10),
    thoughts_tokens: int = 0,
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A GenerateContentResponse calling tools; ``calls`` are ``(name, args)``.

    As Gemini 3 does: ``ids`` gives every functionCall a fresh ``id``; ``signatures`` puts a fresh
    thoughtSignature on the FIRST functionCall only (parallel calls share it); ``signed_empty_part`` adds a
    trailing ``{"text": "", "thoughtSignature": ...}`` part. The finish reason stays STOP (Gemini has no
    tool-call reason).
    """
    parts: list[dict[str, Any]] = [*_thought_parts(thought), *([{"text": text}] if text else [])]
    for n, (name, args) in enumerate(calls):
        call: dict[str, Any] = {"name": name, "args": dict(args)}
        if ids:
            call["id"] = gemini_call_id()
        part: dict[str, Any] = {"functionCall": call}
        if signatures and n == 0:
            part["thoughtSignature"] = thought_signature()
        parts.append(part)
    if signed_empty_part:
        parts.append({"text": "", "thoughtSignature": thought_signature()})
    body = _response_body(parts, model, finish_reason, usage, thoughts_tokens)
    return MessageReply(body, delay_s, hold_open_s)


def _thought_parts(thought: str | None) -> list[dict[str, Any]]:
    return [] if thought is None else [{"text": thought, "thought": True}]


def _response_body(
    parts: list[dict[str, Any]], model: str, finish_reason: str, usage: tuple[int, int], thoughts_tokens: int
) -> dict[str, Any]:
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": finish_reason, "index": 0}
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(usage[0], usage[1], thoughts_tokens),
        "modelVersion": model,
        "responseId": f"resp-fake-{serial()}",
    }


def _usage(prompt: int, candidates: int, thoughts: int) -> dict[str, int]:
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage | {"totalTokenCount": prompt + candidates + thoughts}


def gemini_sse_events(body: Mapping[str, Any]) -> list[str]:
    """The ``data:`` payloads of the stream Gemini would send for ``body`` (it has no terminator).

    Text and thought parts arrive in pieces (a signature on the last piece of its part), function calls
    whole; every event has ``usageMetadata`` as a running total that ends at the body's; the last event has
    the ``finishReason``. A body without candidates (``promptFeedback`` only) is one event.
    """
    candidates = body.get("candidates")
    if not candidates:
        return [json.dumps(body)]
    candidate = candidates[0]
    parts = [piece for part in candidate["content"]["parts"] for piece in _streamed_parts(part)]
    usage = body.get("usageMetadata") or {}
    events = []
    for n, part in enumerate(parts, start=1):
        streamed: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        if n == len(parts):
            streamed["finishReason"] = candidate.get("finishReason", "STOP")
        event: dict[str, Any] = {"candidates": [streamed]}
        if usage:
            event["usageMetadata"] = _running_usage(usage, n / len(parts))
        events.append(
            json.dumps(event | {"modelVersion": body.get("modelVersion"), "responseId": body.get("responseId")})
        )
    return events


def _streamed_parts(part: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = part.get("text")
    if not isinstance(text, str) or not text:
        return [dict(part)]
    rest = {key: value for key, value in part.items() if key not in ("text", "thoughtSignature")}
    streamed = [{"text": piece, **rest} for piece in pieces(text)]
    if "thoughtSignature" in part:
        streamed[-1]["thoughtSignature"] = part["thoughtSignature"]
    return streamed


def _running_usage(final: Mapping[str, int], done: float) -> dict[str, int]:
    candidates = round(final.get("candidatesTokenCount", 0) * done)
    thoughts = round(final.get("thoughtsTokenCount", 0) * done)
    return _usage(final.get("promptTokenCount", 0), candidates, thoughts)


class GeminiRoute(Route):
    """Gemini under ``/gemini/v1beta``. Remembers the signatures and call IDs it hands out (see
    ``gemini_rules``); ``issued`` shows them."""

    models_path = "/models"
    ping_frame = None  # Gemini sends nothing while it thinks

    def __init__(self) -> None:
        super().__init__("gemini", "/gemini/v1beta", (GEMINI_MODEL, "gemini-3.1-pro-preview", "gemini-2.5-flash"))
        self._issued = IssuedParts()
        self._issued_lock = threading.Lock()

    @property
    def issued(self) -> IssuedParts:
        with self._issued_lock:
            return self._issued.copy()

    def endpoint(self, method: str, subpath: str) -> Endpoint | None:
        if method == "GET" and subpath == self.models_path:
            return "models"
        if method == "POST" and subpath.startswith("/models/") and subpath.endswith(_PATH_METHODS):
            return "chat" if "/" not in _model_and_method(subpath)[0] else None
        return None

    def auth_problems(self, request: RecordedRequest) -> list[Problem]:
        return gemini_auth_problems(request.headers, query_key=bool(request.query_params.get("key")))

    def validate(self, request: RecordedRequest) -> list[Problem]:
        model = _model_and_method(request.path.removeprefix(self.prefix))[0]
        return validate_gemini_request(request.body, model=model, issued=self.issued)

    def silent_problems(self, request: RecordedRequest) -> list[str]:
        if self._streams(request) and not self.wants_stream(request):
            return ["streamGenerateContent without alt=sse answers one JSON array, which SSE readers see as nothing"]
        return []

    def wants_stream(self, request: RecordedRequest) -> bool:
        return self._streams(request) and request.query_params.get("alt") == ["sse"]

    def _streams(self, request: RecordedRequest) -> bool:
        return request.path.endswith(":streamGenerateContent")

    def json_body(self, body: Mapping[str, Any], request: RecordedRequest) -> Any:
        if self._streams(request):
            return [json.loads(event) for event in gemini_sse_events(body)]
        return body

    def remember_issued(self, body: Mapping[str, Any]) -> None:
        with self._issued_lock:
            for candidate in objects(body.get("candidates")):
                self._issued.remember(objects((candidate.get("content") or {}).get("parts")))

    def forget_issued(self) -> None:
        with self._issued_lock:
            self._issued = IssuedParts()

    def error_body(self, error: ErrorReply) -> Any:
        """``{"error": {"code", "message", "status"}}`` (``details`` through ``extra``); variant ``"array"``
        wraps it in a one-element list, as Gemini sometimes does."""
        if error.variant not in (None, "array"):
            raise ValueError(f"the Gemini error shape has no variant {error.variant!r}")
        status = error.error_type or _STATUS_NAMES.get(error.status, "UNKNOWN")
        body = {"error": {"code": error.status, "message": error.message, "status": status, **error.extra}}
        return [body] if error.variant == "array" else body

    def stream_frames(self, body: Mapping[str, Any], request: RecordedRequest) -> list[bytes]:
        return [sse_frame(event) for event in gemini_sse_events(body)]

    def echo_reply(self, request: RecordedRequest) -> MessageReply:
        contents = request.body["contents"]
        answer = f"echo: {last_user_text(contents)}"
        model = _model_and_method(request.path.removeprefix(self.prefix))[0]
        return gemini_text(answer, model=model, usage=(token_estimate(contents), len(answer.split())))

    def model_list_body(self) -> Any:
        methods = ["generateContent", "streamGenerateContent", "countTokens"]
        return {
            "models": [
                {"name": f"models/{m}", "displayName": m, "supportedGenerationMethods": methods} for m in self.models
            ]
        }


def _model_and_method(subpath: str) -> tuple[str, str]:
    """``/models/{model}:{method}`` → ``(model, method)``."""
    model, _, method = subpath.removeprefix("/models/").rpartition(":")
    return model, method
