"""Rules several wires share, each a pure function: the user nudge that stands in for a forced tool
choice, reasoning placeholders for thinking models, K2 marker parsing, and stop-reason hygiene."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from colibri_router.conversation import Media, Message, Part, Text, Thinking, ToolCall, ToolChoice, ToolResult, ToolSpec
from colibri_router.toolcalls.arguments import parse_arguments
from colibri_router.toolcalls.k2_markers import contains_k2_markers, parse_k2_markers

REASONING_PLACEHOLDER = "(reasoning for this step was not recorded)"
# Tool results on wires whose tool messages have no error flag, and that refuse an empty result.
EMPTY_TOOL_RESULT = "(the tool returned no output)"
ERROR_RESULT_PREFIX = "[tool error] "
# Token budgets the one `reasoning` control stands for, where a wire takes a budget (Claude, Gemini
# 2.5, Cohere).
THINKING_BUDGETS = {"low": 1024, "medium": 4096, "high": 16384}


def function_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as ``{"type": "function", "function": {...}}`` (OpenAI's shape, which Cohere and Ollama
    share). The JSON schema goes through untouched as ``parameters``."""
    encoded = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = dict(tool.input_schema)
        encoded.append({"type": "function", "function": function})
    return encoded


def function_tool_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """Calls as ``{"id", "type": "function", "function": {"name", "arguments": <JSON text>}}``."""
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
        }
        for call in calls
    ]


def tool_choice_nudge(choice: ToolChoice | None) -> str | None:
    """The user message that asks for what a forced ``tool_choice`` would have forced; None for
    choices every wire can express (auto, none)."""
    if choice is None or choice.mode in ("auto", "none"):
        return None
    if choice.mode == "tool":
        return f"Answer by calling the tool `{choice.name}`."
    return "Answer by calling one of the available tools."


def describe_choice(choice: ToolChoice | None) -> str:
    if choice is not None and choice.mode == "tool":
        return f"{{type: tool, name: {choice.name}}}"
    return repr(choice.mode if choice else "auto")


def with_reasoning_placeholders(messages: Sequence[Message]) -> tuple[tuple[Message, ...], int]:
    """Give every assistant tool-call turn a reasoning part: thinking models refuse tool-call turns
    without their reasoning (Moonshot: "reasoning_content is missing in assistant tool call message").
    Returns the messages and how many turns were filled."""
    filled = 0
    out = []
    for message in messages:
        needs_reasoning = message.role == "assistant" and bool(message.tool_calls())
        if needs_reasoning and not any(isinstance(p, Thinking) for p in message.parts):
            out.append(replace(message, parts=(Thinking(REASONING_PLACEHOLDER), *message.parts)))
            filled += 1
        else:
            out.append(message)
    return tuple(out), filled


# Parts whose text may hold K2 markers (a tuple: a union would be built anew on every check).
_TEXTUAL = (Text, Thinking)


def parse_marker_calls(parts: Sequence[Part]) -> tuple[list[Part], bool]:
    """Tool calls that arrived as K2 marker text (in the answer or in its reasoning) become real calls;
    the markers leave the text. Returns the parts and whether any markers were found."""
    out: list[Part] = []
    found = False
    for part in parts:
        if isinstance(part, _TEXTUAL) and contains_k2_markers(part.text):
            found = True
            text, marker_calls = parse_k2_markers(part.text)
            if text:
                out.append(replace(part, text=text))
            out.extend(ToolCall(c.id, c.name, parse_arguments(c.arguments)) for c in marker_calls)
        else:
            out.append(part)
    return out, found


def undeclared_call_warnings(calls: Sequence[ToolCall], declared: set[str]) -> tuple[str, ...]:
    return tuple(
        f"the model called tool {call.name!r}, which the request did not declare"
        for call in calls
        if call.name not in declared
    )


def user_text(parts: Sequence[Part]) -> str:
    """A user turn's text parts as one string (a file's block starts and ends on a line of its own)."""
    return "".join(part.text for part in parts if isinstance(part, Text))


def user_content(parts: Sequence[Part], encode: Callable[[Media], dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A user turn's text and media, for wires whose tool messages carry only text: a string when it
    holds no media (every host reads that), else content parts in order, the media of the turn's tool
    results first, each group introduced by the call it came from."""
    media = [part for part in parts if isinstance(part, Media)]
    results = [part for part in parts if isinstance(part, ToolResult) and part.media]
    if not media and not results:
        return user_text(parts)
    content: list[dict[str, Any]] = []
    for result in results:
        content.append({"type": "text", "text": f"(returned by tool call {result.call_id})"})
        content.extend(encode(item) for item in result.media)
    for part in parts:
        if isinstance(part, Text) and part.text:
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, Media):
            content.append(encode(part))
    return content
