"""OpenAI chat-completions codec: our conversation ⇄ ``/chat/completions`` JSON. Pure, no I/O.

Shared by Kimi and every later OpenAI-compatible vendor; a vendor's quirks (IDs, tool_choice,
reasoning rules) live in its own profile module, which calls these functions. Tool-call IDs are
written as they are in the messages: the profile rewrites them first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from colibri_router.conversation import (
    AssistantTurn,
    Message,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from colibri_router.errors import MalformedResponse
from colibri_router.toolcalls.arguments import parse_arguments

EMPTY_TOOL_RESULT = "(the tool returned no output)"
ERROR_RESULT_PREFIX = "[tool error] "


def encode_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Contract I19: the JSON schema is passed through untouched as ``parameters``."""
    encoded = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = dict(tool.input_schema)
        encoded.append({"type": "function", "function": function})
    return encoded


def encode_messages(messages: Sequence[Message], system: str | None) -> list[dict[str, Any]]:
    """System prompt as a leading ``system`` message (I18); tool results as ``tool`` messages."""
    encoded: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            assistant = _assistant_message(message.parts)
            if assistant is not None:
                encoded.append(assistant)
        else:
            encoded.extend(_user_messages(message.parts))
    return encoded


def _assistant_message(parts: Sequence[Part]) -> dict[str, Any] | None:
    text = "".join(p.text for p in parts if isinstance(p, Text))
    reasoning = "".join(p.text for p in parts if isinstance(p, Thinking))
    calls = [p for p in parts if isinstance(p, ToolCall)]
    if not text and not calls:
        return None  # nothing the upstream could read; Moonshot refuses empty assistant text
    # An assistant tool-call message never carries content "" (Moonshot: "text content is empty").
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
            for call in calls
        ]
    return message


def _user_messages(parts: Sequence[Part]) -> list[dict[str, Any]]:
    """A user turn may mix tool results and text; order is kept, text runs become user messages."""
    out: list[dict[str, Any]] = []
    text_run: list[str] = []

    def flush_text() -> None:
        if text_run:
            out.append({"role": "user", "content": "".join(text_run)})
            text_run.clear()

    for part in parts:
        if isinstance(part, ToolResult):
            flush_text()
            content = part.content if part.content.strip() else EMPTY_TOOL_RESULT
            if part.is_error:
                # OpenAI-style tool messages have no error flag; say it in the text the model reads.
                content = ERROR_RESULT_PREFIX + content
            out.append({"role": "tool", "tool_call_id": part.call_id, "content": content})
        elif isinstance(part, Text):
            text_run.append(part.text)
    flush_text()
    return out


def decode_body(body: Mapping[str, Any]) -> AssistantTurn:
    """A chat.completion body → turn with the upstream's raw IDs and finish_reason."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse("no choices[0] in the chat completion")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedResponse("choices[0].message is missing or not an object")
    parts: list[Part] = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        parts.append(Thinking(reasoning))
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponse("choices[0].message.content is not a string")
    if content:
        parts.append(Text(content))
    parts.extend(_decode_tool_calls(message.get("tool_calls")))
    finish_reason = choice.get("finish_reason")
    model = body.get("model")
    return AssistantTurn(
        parts=tuple(parts),
        stop_reason=finish_reason if isinstance(finish_reason, str) else None,
        model=model if isinstance(model, str) and model else None,
        usage=_decode_usage(body.get("usage") or choice.get("usage")),
    )


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
        arguments = function.get("arguments")
        # Some OpenAI-compatible hosts send the arguments as an object instead of JSON text.
        parsed = (
            dict(arguments)
            if isinstance(arguments, dict)
            else parse_arguments(arguments if isinstance(arguments, str) else None)
        )
        calls.append(ToolCall(id=str(raw.get("id") or ""), name=function["name"], arguments=parsed))
    return calls


def _decode_usage(usage: object) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    return Usage.of(usage.get("prompt_tokens"), usage.get("completion_tokens"))
