"""Our conversation → Gemini ``contents`` (roles ``user``/``model``), checked the way Gemini checks it.

Gemini rejects histories other services accept (https://ai.google.dev/gemini-api/docs/function-calling,
https://ai.google.dev/gemini-api/docs/thought-signatures), so the history is
shaped here to what it validates:
- consecutive turns of one role become one content, and a function-call turn always follows a user
  or function-response turn (a history that opens with calls gets a short user turn first);
- the user turn after a function-call turn holds exactly one ``functionResponse`` per call, in call
  order, ahead of any text: a missing result is sent as an error result, a result answering no call
  of that turn is sent as text (each with a warning);
- no empty text parts and no empty ``parts`` (a signature-only part is not empty: it is sent);
- ``id`` and ``thoughtSignature`` go back exactly where Gemini issued them, and only then; the first
  call of a model turn Gemini did not sign gets the documented skip signature;
- reasoning is replayed only as Gemini's own signed thought parts: Gemini cannot read another model's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from colibri_router.conversation import Media, Message, Part, Role, Text, Thinking, ToolCall, ToolResult
from colibri_router.wires.gemini.state import SKIP_SIGNATURE, call_id_of, signature_of

MISSING_RESULT = "no result was sent for this call"
OPENING_TURN = "(continuing an earlier conversation)"


@dataclass(slots=True)
class _Run:
    """Consecutive messages of one role, as the one turn Gemini will see."""

    role: Role
    parts: list[Part] = field(default_factory=list)


def encode_contents(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[str]]:
    """The ``contents`` for ``messages``, and warnings for every repair made to the history."""
    warnings: list[str] = []
    contents: list[dict[str, Any]] = []
    awaiting: list[ToolCall] = []  # the calls of the model turn just encoded, which the next turn answers
    for run in _runs(messages):
        if run.role == "assistant":
            contents.append({"role": "model", "parts": _model_parts(run.parts)})
            awaiting = [part for part in run.parts if isinstance(part, ToolCall)]
        else:
            contents.append({"role": "user", "parts": _user_parts(run.parts, awaiting, warnings)})
            awaiting = []
    if awaiting:
        contents.append({"role": "user", "parts": _user_parts((), awaiting, warnings)})
    contents = _merged(content for content in contents if content["parts"])
    if contents and contents[0]["role"] == "model" and _has_call(contents[0]):
        contents.insert(0, {"role": "user", "parts": [{"text": OPENING_TURN}]})
        warnings.append("the history opens with a tool-call turn, which Gemini refuses: sent a short user turn first")
    return contents, warnings


def _runs(messages: Iterable[Message]) -> list[_Run]:
    runs: list[_Run] = []
    for message in messages:
        if not runs or runs[-1].role != message.role:
            runs.append(_Run(message.role))
        runs[-1].parts.extend(message.parts)
    return runs


def _model_parts(parts: Iterable[Part]) -> list[dict[str, Any]]:
    encoded: list[dict[str, Any]] = []
    first_call = True
    for part in parts:
        if isinstance(part, Text):
            signature = signature_of(part.state)
            if signature is not None:
                encoded.append({"text": part.text, "thoughtSignature": signature})
            elif part.text:
                encoded.append({"text": part.text})
        elif isinstance(part, Thinking):
            signature = signature_of(part.state)
            if signature is not None:
                encoded.append({"text": part.text, "thought": True, "thoughtSignature": signature})
        elif isinstance(part, ToolCall):
            encoded.append(_function_call(part, first_call))
            first_call = False
    return encoded


def _function_call(call: ToolCall, first: bool) -> dict[str, Any]:
    function_call: dict[str, Any] = {"name": call.name, "args": dict(call.arguments)}
    if (gemini_id := call_id_of(call.state)) is not None:
        function_call = {"id": gemini_id, **function_call}
    part: dict[str, Any] = {"functionCall": function_call}
    # Only the first call of a turn carries a signature (later parallel calls never do), so only an
    # unsigned first call needs the skip signature.
    signature = signature_of(call.state) or (SKIP_SIGNATURE if first else None)
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _user_parts(parts: Iterable[Part], calls: Sequence[ToolCall], warnings: list[str]) -> list[dict[str, Any]]:
    wanted = {call.id for call in calls}
    results: dict[str, ToolResult] = {}
    others: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ToolResult):
            if part.call_id in wanted and part.call_id not in results:
                results[part.call_id] = part
            else:
                others.append({"text": f"[result of tool call {part.call_id}] {part.content}"})
                warnings.append(
                    f"the tool result for call {part.call_id!r} answers no call of the turn before it: sent as text"
                )
            # Gemini's function responses hold JSON only: what a tool returned as an image or PDF follows
            # as inline data in the same turn.
            others.extend(media_part(media) for media in part.media)
        elif isinstance(part, Text) and part.text:
            others.append({"text": part.text})
        elif isinstance(part, Media):
            others.append(media_part(part))
    responses = []
    for call in calls:
        result = results.get(call.id)
        if result is None:
            warnings.append(f"tool call {call.name!r} ({call.id}) had no result: sent an error result to Gemini")
        responses.append(_function_response(call, result))
    return responses + others


def _function_response(call: ToolCall, result: ToolResult | None) -> dict[str, Any]:
    # `response` must be an object; Gemini documents the keys `output` and `error`.
    if result is None:
        response = {"error": MISSING_RESULT}
    else:
        response = {"error" if result.is_error else "output": result.content}
    function_response: dict[str, Any] = {"name": call.name, "response": response}
    if (gemini_id := call_id_of(call.state)) is not None:
        function_response = {"id": gemini_id, **function_response}
    return {"functionResponse": function_response}


def media_part(media: Media) -> dict[str, Any]:
    """``inlineData`` (base64) for content, ``fileData`` for a URL."""
    if media.data is not None:
        return {"inlineData": {"mimeType": media.media_type, "data": media.data}}
    return {"fileData": {"mimeType": media.media_type, "fileUri": media.url}}


def _merged(contents: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent contents of one role as one (a turn emptied by the rules above leaves its neighbours
    side by side)."""
    merged: list[dict[str, Any]] = []
    for content in contents:
        if merged and merged[-1]["role"] == content["role"]:
            merged[-1] = {"role": content["role"], "parts": [*merged[-1]["parts"], *content["parts"]]}
        else:
            merged.append(content)
    return merged


def _has_call(content: dict[str, Any]) -> bool:
    return any("functionCall" in part for part in content["parts"])
