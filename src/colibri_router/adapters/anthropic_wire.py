"""Anthropic Messages codec: our conversation ⇄ ``/v1/messages`` JSON. Pure, no I/O.

Serves Claude, and later Kimi's Anthropic-compatible endpoint. Tool-call IDs are written as they
are in the messages: the caller makes them Claude-safe first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from colibri_router.conversation import (
    AssistantTurn,
    Message,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
)
from colibri_router.errors import MalformedResponse

TOOL_CHOICES = {"auto": "auto", "none": "none", "required": "any", "tool": "tool"}


def encode_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    encoded = []
    for tool in tools:
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            spec["description"] = tool.description
        spec["input_schema"] = dict(tool.input_schema)
        encoded.append(spec)
    return encoded


def encode_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    encoded: dict[str, Any] = {"type": TOOL_CHOICES[choice.mode]}
    if choice.mode == "tool":
        encoded["name"] = choice.name
    return encoded


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    encoded = []
    for message in messages:
        blocks = [block for part in message.parts if (block := _encode_part(part)) is not None]
        if blocks:
            encoded.append({"role": message.role, "content": blocks})
    return encoded


def _encode_part(part: Part) -> dict[str, Any] | None:
    if isinstance(part, Text):
        # Claude rejects empty text blocks.
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, Thinking):
        # Claude accepts back only thinking it signed itself; another model's reasoning is dropped.
        if part.signature is None:
            return None
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, ToolCall):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.arguments)}
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id, "content": part.content}
    if part.is_error:
        block["is_error"] = True
    return block


def decode_body(body: Mapping[str, Any]) -> AssistantTurn:
    content = body.get("content")
    if not isinstance(content, list):
        raise MalformedResponse("the message has no content list")
    parts = [part for block in content if (part := _decode_block(block)) is not None]
    stop_reason = body.get("stop_reason")
    model = body.get("model")
    return AssistantTurn(
        parts=tuple(parts),
        stop_reason=stop_reason if isinstance(stop_reason, str) else None,
        model=model if isinstance(model, str) and model else None,
        usage=_decode_usage(body.get("usage")),
    )


def _decode_block(block: object) -> Part | None:
    if not isinstance(block, dict):
        raise MalformedResponse("a content block is not an object")
    kind = block.get("type")
    if kind == "text":
        return Text(str(block.get("text", "")))
    if kind == "thinking":
        signature = block.get("signature")
        return Thinking(str(block.get("thinking", "")), signature if isinstance(signature, str) else None)
    if kind == "tool_use":
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            raise MalformedResponse("a tool_use block has no id or name")
        tool_input = block.get("input")
        return ToolCall(block["id"], block["name"], tool_input if isinstance(tool_input, dict) else {})
    return None  # redacted_thinking, server tools, future block types: nothing a host can act on


def _decode_usage(usage: object) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    return Usage.of(usage.get("input_tokens"), usage.get("output_tokens"))
