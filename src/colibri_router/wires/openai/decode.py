"""OpenAI chat-completions answers: a ``chat.completion`` body (or the one the stream assembler
rebuilt) → :class:`AssistantTurn`. Pure, no I/O.

Hosts differ in small ways, all read here: reasoning arrives as ``reasoning_content`` or
``reasoning``; Mistral's ``content`` may be a list of ``thinking`` and ``text`` chunks; usage may sit
at the top level, inside the choice, or under Groq's ``x_groq``; cached tokens are reported as
``prompt_tokens_details.cached_tokens`` or (Moonshot) a top-level ``cached_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from colibri_router.conversation import AssistantTurn, Part, Text, Thinking, ToolCall, Usage
from colibri_router.errors import MalformedResponse
from colibri_router.toolcalls.arguments import arguments_object

FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "model_length": "max_tokens",
    "content_filter": "refusal",
}
REASONING_FIELDS = ("reasoning_content", "reasoning")


class ChatCompletion(NamedTuple):
    """What a chat.completion body says, read but not yet shaped into a turn (the codec adds its rules)."""

    parts: list[Part]
    finish_reason: str | None
    model: str | None
    usage: Usage


def decode_body(body: Mapping[str, Any]) -> AssistantTurn:
    """A chat.completion body → turn with the upstream's raw IDs and finish_reason."""
    read = read_body(body)
    return AssistantTurn(parts=tuple(read.parts), stop_reason=read.finish_reason, model=read.model, usage=read.usage)


def read_body(body: Mapping[str, Any]) -> ChatCompletion:
    """A chat.completion body's parts and reported fields, the IDs and finish_reason as sent."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse("no choices[0] in the chat completion")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedResponse("choices[0].message is missing or not an object")
    parts: list[Part] = []
    reasoning = _reasoning(message)
    if reasoning:
        parts.append(Thinking(reasoning))
    parts.extend(_content_parts(message.get("content")))
    parts.extend(_decode_tool_calls(message.get("tool_calls")))
    finish_reason = choice.get("finish_reason")
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        # OpenAI declines in `refusal` (structured outputs): the text is the answer, the turn a refusal.
        parts.append(Text(refusal))
        finish_reason = "content_filter"
    model = body.get("model")
    return ChatCompletion(
        parts,
        finish_reason if isinstance(finish_reason, str) else None,
        model if isinstance(model, str) and model else None,
        decode_usage(body.get("usage") or choice.get("usage") or _object(body.get("x_groq")).get("usage")),
    )


def _reasoning(message: dict[str, Any]) -> str | None:
    for field in REASONING_FIELDS:
        text = message.get(field)
        if isinstance(text, str) and text:
            return text
    return None


def _content_parts(content: object) -> list[Part]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [Text(content)]
    if not isinstance(content, list):
        raise MalformedResponse("choices[0].message.content is neither a string nor a list of chunks")
    # Mistral reasoning models: [{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}, {"type": "text"...}]
    parts: list[Part] = []
    for raw in content:
        chunk = _object(raw)
        if chunk.get("type") == "thinking":
            thinking = "".join(_chunk_text(inner) for inner in _list(chunk.get("thinking")))
            if thinking:
                parts.append(Thinking(thinking))
        elif text := _chunk_text(chunk):
            parts.append(Text(text))
    return parts


def _chunk_text(chunk: object) -> str:
    text = _object(chunk).get("text")
    return text if isinstance(text, str) else ""


def _decode_tool_calls(raw_calls: object) -> list[ToolCall]:
    if raw_calls is None:
        return []
    if not isinstance(raw_calls, list):
        raise MalformedResponse("choices[0].message.tool_calls is not a list")
    calls = []
    for raw in raw_calls:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise MalformedResponse("a tool call has no function name")
        # Some OpenAI-compatible hosts send the arguments as an object instead of JSON text.
        parsed = arguments_object(function.get("arguments"))
        calls.append(ToolCall(id=wire_call_id(raw.get("id")), name=function["name"], arguments=parsed))
    return calls


def wire_call_id(raw: object) -> str:
    """A call's ID as sent; ``"null"`` (Mistral's SDK default) and non-strings count as missing."""
    return raw if isinstance(raw, str) and raw != "null" else ""


def decode_usage(usage: object) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    prompt_details = _object(usage.get("prompt_tokens_details"))
    completion_details = _object(usage.get("completion_tokens_details"))
    return Usage.of(
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        cached=prompt_details.get("cached_tokens") or usage.get("cached_tokens"),
        cache_write=prompt_details.get("cache_write_tokens"),
        reasoning=completion_details.get("reasoning_tokens"),
    )


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
