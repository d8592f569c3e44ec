"""A GenerateContentResponse (non-streamed, or rebuilt by the stream assembler) → our :class:`AssistantTurn`.

Gemini has no tool-call finish reason: a turn with calls ends ``STOP``, so calls make it ``tool_use``. Some
endings are failures, not answers (https://ai.google.dev/api/generate-content): a prompt blocked before any
candidate (HTTP 200, ``promptFeedback.blockReason``) and a function call the model could not form
(``MALFORMED_FUNCTION_CALL`` and its kin) raise the provider's API error, never an empty success. A blocked
prompt is a content refusal (kind ``CONTENT_FILTERED``, not retried, and a fallback chain stops there): the
same prompt would be blocked again. Google's ``BlockReason`` values are ``SAFETY``, ``OTHER``, ``BLOCKLIST``,
``PROHIBITED_CONTENT`` and ``IMAGE_SAFETY`` on the Gemini API, and Vertex adds ``MODEL_ARMOR`` and
``JAILBREAK``; any reason at all means the prompt was refused, so none is listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from colibri_router.conversation import AssistantTurn, Part, Text, Thinking, ToolCall, Usage
from colibri_router.errors import ErrorFamily, MalformedResponse
from colibri_router.toolcalls.arguments import arguments_object
from colibri_router.toolcalls.assembly.base import as_object, as_text
from colibri_router.wires.gemini.state import gemini_state

FINISH_REASONS = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens"}
# Output withheld by a filter: the safety family and recitation.
REFUSALS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
# The model tried to call a tool and failed: the call was dropped, so what is left is no answer.
FAILED_CALLS = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})


def decode_response(body: Mapping[str, Any], errors: ErrorFamily) -> AssistantTurn:
    candidate = _candidate(body, errors)
    finish_reason = as_text(candidate.get("finishReason")) or None
    if finish_reason in FAILED_CALLS:
        detail = as_text(candidate.get("finishMessage"))
        raise errors.api(
            f"Gemini ended the answer with finishReason {finish_reason}: the model's tool call was not usable"
            + (f" ({detail})" if detail else ""),
            status=200,
            error_type=finish_reason,
        )
    # A candidate stopped by a filter (or by MAX_TOKENS while thinking) may have no content at all.
    raw_parts = as_object(candidate.get("content")).get("parts") or []
    if not isinstance(raw_parts, list):
        raise MalformedResponse("candidates[0].content.parts is not a list")
    parts = [part for raw in raw_parts if (part := _decode_part(raw)) is not None]
    model = body.get("modelVersion")
    return AssistantTurn(
        parts=tuple(parts),
        stop_reason=_stop_reason(finish_reason, any(isinstance(part, ToolCall) for part in parts)),
        model=model if isinstance(model, str) and model else None,
        usage=_decode_usage(body.get("usageMetadata")),
    )


def _candidate(body: Mapping[str, Any], errors: ErrorFamily) -> dict[str, Any]:
    candidates = body.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        return candidates[0]
    feedback = as_object(body.get("promptFeedback"))
    if reason := as_text(feedback.get("blockReason")):
        detail = as_text(feedback.get("blockReasonMessage"))
        raise errors.api(
            f"Gemini blocked the prompt (promptFeedback.blockReason {reason})" + (f": {detail}" if detail else ""),
            status=200,
            error_type=reason,
            kind="CONTENT_FILTERED",
        )
    raise MalformedResponse("the GenerateContentResponse has no candidates and no promptFeedback.blockReason")


def _decode_part(raw: object) -> Part | None:
    if not isinstance(raw, dict):
        raise MalformedResponse("a content part is not an object")
    signature = as_text(raw.get("thoughtSignature")) or None
    call = raw.get("functionCall")
    if isinstance(call, dict):
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise MalformedResponse("a functionCall part has no name")
        call_id = as_text(call.get("id"))
        return ToolCall(
            id=call_id,
            name=name,
            arguments=arguments_object(call.get("args")),
            state=gemini_state(call_id, signature),
        )
    text = as_text(raw.get("text"))
    if not text and signature is None:
        return None  # an empty part, or a kind the router does not surface (inlineData, executableCode...)
    state = gemini_state(None, signature)
    return Thinking(text, state=state) if raw.get("thought") is True else Text(text, state=state)


def _stop_reason(finish_reason: str | None, has_calls: bool) -> str | None:
    if finish_reason in REFUSALS:
        return "refusal"
    stop = FINISH_REASONS.get(finish_reason or "", finish_reason)
    return "tool_use" if has_calls and stop in {"end_turn", None} else stop


def _decode_usage(raw: object) -> Usage:
    """Output billed = visible candidates + thoughts; prompt = the prompt (cached tokens included) plus
    the prompt of server-side tools."""
    usage = as_object(raw)
    thoughts = _count(usage.get("thoughtsTokenCount"))
    return Usage.of(
        _count(usage.get("promptTokenCount")) + _count(usage.get("toolUsePromptTokenCount")),
        _count(usage.get("candidatesTokenCount")) + thoughts,
        cached=usage.get("cachedContentTokenCount"),
        reasoning=thoughts,
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
