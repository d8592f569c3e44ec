"""OpenAI chat-completions requests: our conversation → ``messages`` and ``tools`` JSON. Pure, no I/O.

Tool-call IDs are written as they are in the messages: the codec derives the wire's IDs first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from colibri_router.conversation import Media, Message, Part, Text, Thinking, ToolCall, ToolResult
from colibri_router.errors import InvalidRequestError
from colibri_router.wires.rules import (
    EMPTY_TOOL_RESULT,
    ERROR_RESULT_PREFIX,
    function_tool_calls,
    function_tools,
    user_content,
)

# What stands between a tool message and a user message on hosts that forbid the pair (Mistral 3230).
TOOL_RESULTS_BRIDGE = "(tool results received)"


encode_tools = function_tools  # the wire's tool shape, shared with Cohere and Ollama


def encode_messages(
    messages: Sequence[Message],
    system: str | None,
    *,
    reasoning_field: str | None = "reasoning_content",
    bridge_user_after_tool: bool = False,
) -> list[dict[str, Any]]:
    """System prompt as a leading ``system`` message; tool results as ``tool`` messages.

    ``reasoning_field`` names the field assistant reasoning is replayed in (None: never replayed).
    ``bridge_user_after_tool`` puts a short assistant message between a tool message and a user one.
    """
    encoded: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            assistant = _assistant_message(message.parts, reasoning_field)
            if assistant is not None:
                encoded.append(assistant)
            continue
        for user_message in _user_messages(message.parts):
            if bridge_user_after_tool and user_message["role"] == "user" and encoded and encoded[-1]["role"] == "tool":
                encoded.append({"role": "assistant", "content": TOOL_RESULTS_BRIDGE})
            encoded.append(user_message)
    return encoded


def _assistant_message(parts: Sequence[Part], reasoning_field: str | None) -> dict[str, Any] | None:
    text = "".join(p.text for p in parts if isinstance(p, Text))
    reasoning = "".join(p.text for p in parts if isinstance(p, Thinking))
    calls = [p for p in parts if isinstance(p, ToolCall)]
    if not text and not calls:
        return None  # nothing the upstream could read; Moonshot refuses empty assistant text
    # An assistant tool-call message never carries content "" (Moonshot: "text content is empty").
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning and reasoning_field is not None:
        message[reasoning_field] = reasoning
    if calls:
        message["tool_calls"] = function_tool_calls(calls)
    return message


def _user_messages(parts: Sequence[Part]) -> list[dict[str, Any]]:
    """A user turn may mix tool results and text. Every tool message comes first, then the text as one
    user message: OpenAI (and DeepSeek, DashScope) refuse a user message inside the run of tool
    messages that answers an assistant turn."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ToolResult):
            content = part.content if part.content.strip() else EMPTY_TOOL_RESULT
            if part.is_error:
                # OpenAI-style tool messages have no error flag; say it in the text the model reads.
                content = ERROR_RESULT_PREFIX + content
            out.append({"role": "tool", "tool_call_id": part.call_id, "content": content})
    user = user_content(parts, media_part)
    if user:
        out.append({"role": "user", "content": user})
    return out


def media_part(media: Media) -> dict[str, Any]:
    """An image as an ``image_url`` part (a data URL, or its URL); a PDF as a ``file`` part (chat
    completions take PDFs only as base64 ``file_data``, with a file name)."""
    if media.kind == "image":
        return {"type": "image_url", "image_url": {"url": media.data_url()}}
    if media.data is None:
        raise InvalidRequestError("a PDF given by URL cannot be sent on the OpenAI wire: send its content (base64)")
    return {"type": "file", "file": {"filename": media.title or "document.pdf", "file_data": media.data_url()}}
