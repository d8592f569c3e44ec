"""Gemini ``streamGenerateContent?alt=sse`` events → one ``GenerateContentResponse`` body.

Every event is itself a GenerateContentResponse holding what was produced since the previous one: text and
thought summaries arrive in pieces, a ``functionCall`` part arrives whole. The stream has no terminator
(https://ai.google.dev/api/generate-content): it is complete once the candidate carries a ``finishReason``, or
once the prompt itself was blocked (``promptFeedback.blockReason`` and no candidate at all). ``usageMetadata``
is a running total repeated on most events: the last one wins, and an event without it leaves the tally alone
(the same page).
"""

from __future__ import annotations

import json
from typing import Any

from colibri_router.toolcalls.assembly.base import (
    BaseAssembler,
    Fragments,
    StreamErrorEvent,
    as_object,
    as_text,
    load_json,
)


class _TextPart:
    """A text or thought part growing over several events. A ``thoughtSignature`` arrives on the last
    piece of the part it signs, so a signed part is closed: nothing more is ever merged into it."""

    __slots__ = ("signature", "text", "thought")

    def __init__(self, thought: bool) -> None:
        self.thought = thought
        self.text = Fragments()
        self.signature: str | None = None

    def takes(self, thought: bool) -> bool:
        return self.thought == thought and self.signature is None

    def to_dict(self) -> dict[str, Any]:
        part: dict[str, Any] = {"text": self.text.joined()}
        if self.thought:
            part["thought"] = True
        if self.signature is not None:
            part["thoughtSignature"] = self.signature
        return part


def gemini_error_event(payload: dict[str, Any]) -> StreamErrorEvent:
    """``{"error": {"code", "message", "status"}}`` sent inside a stream: Google names the error kind in
    ``status`` (``INTERNAL``, ``RESOURCE_EXHAUSTED``), not ``type``."""
    error = payload.get("error")
    if isinstance(error, dict):
        return StreamErrorEvent(as_text(error.get("status")) or None, as_text(error.get("message")) or str(error))
    return StreamErrorEvent(None, str(error))


class GeminiStreamAssembler(BaseAssembler):
    """GenerateContentResponse events → the GenerateContentResponse a non-streamed call returns."""

    def __init__(self) -> None:
        super().__init__()
        self._events = 0
        self._parts: list[_TextPart | dict[str, Any]] = []
        self._candidate_seen = False
        self._finish_reason: str | None = None
        self._finish_message: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model_version: str | None = None
        self._response_id: str | None = None
        self._prompt_feedback: dict[str, Any] | None = None

    def _feed(self, event: str, data: str) -> str | None:
        payload = load_json(data)
        if payload.get("error") is not None:
            raise gemini_error_event(payload)
        self._events += 1
        self._model_version = as_text(payload.get("modelVersion")) or self._model_version
        self._response_id = as_text(payload.get("responseId")) or self._response_id
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict) and usage:
            self._usage = usage
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback:
            self._prompt_feedback = feedback
            # A blocked prompt gets no candidate: this event is the whole answer.
            self._complete = self._complete or bool(feedback.get("blockReason"))
        candidate = _first_candidate(payload.get("candidates"))
        if candidate is None:
            return None
        self._candidate_seen = True
        label = None
        parts = as_object(candidate.get("content")).get("parts")
        for part in parts if isinstance(parts, list) else ():
            label = self._add_part(as_object(part)) or label
        if finish_reason := as_text(candidate.get("finishReason")):
            self._finish_reason = finish_reason
            self._complete = True
        self._finish_message = as_text(candidate.get("finishMessage")) or self._finish_message
        return label

    def _add_part(self, part: dict[str, Any]) -> str | None:
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._parts.append(part)  # whole, with its id and thoughtSignature
            self._started = True
            self._grew(len(json.dumps(call.get("args") or {}, ensure_ascii=False)))
            return f"tool_call {as_text(call.get('name'))}"
        if "text" not in part and "thoughtSignature" not in part:
            if part:
                self._parts.append(part)  # inlineData, executableCode...: kept as sent
            return None
        signature = as_text(part.get("thoughtSignature")) or None
        if not as_text(part.get("text")) and signature is None:
            return None  # an empty piece: it must not split the part around it
        thought = part.get("thought") is True
        last = self._parts[-1] if self._parts else None
        target = last if isinstance(last, _TextPart) and last.takes(thought) else None
        if target is None:
            target = _TextPart(thought)
            self._parts.append(target)
        target.signature = signature
        return self._add(target.text, part.get("text"), "thinking" if thought else "text")

    def _received(self) -> str:
        return (
            f"{self._events} events received but no finishReason ({self._chars} output chars, {len(self._parts)} parts)"
        )

    def _body(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self._candidate_seen:
            parts = [part.to_dict() if isinstance(part, _TextPart) else part for part in self._parts]
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if self._finish_reason is not None:
                candidate["finishReason"] = self._finish_reason
            if self._finish_message is not None:
                candidate["finishMessage"] = self._finish_message
            body["candidates"] = [candidate]
        if self._prompt_feedback is not None:
            body["promptFeedback"] = self._prompt_feedback
        if self._usage is not None:
            body["usageMetadata"] = self._usage
        if self._model_version is not None:
            body["modelVersion"] = self._model_version
        if self._response_id is not None:
            body["responseId"] = self._response_id
        return body


def _first_candidate(candidates: object) -> dict[str, Any] | None:
    """Candidate 0: the router never asks for more than one (``candidateCount`` is not sent)."""
    if not isinstance(candidates, list):
        return None
    for candidate in candidates:
        if isinstance(candidate, dict) and candidate.get("index", 0) == 0:
            return candidate
    return None
