"""Provider-agnostic conversation types: what goes down to an adapter and what comes back up.

Every adapter encodes a :class:`CompletionRequest` into its provider's wire JSON and decodes the
provider's answer into an :class:`AssistantTurn`. Nothing here knows about HTTP or any provider.
The types are frozen so that no layer can mutate what a caller handed in (contract I20).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pydantic import BaseModel, ConfigDict

Role: TypeAlias = Literal["user", "assistant"]


class AnthropicTool(TypedDict):
    """A tool definition in Anthropic's shape, the shape MCP hosts already speak."""

    name: str
    description: NotRequired[str]
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    """Reasoning text (Kimi ``reasoning_content``, Claude ``thinking``); the signature is Claude's."""

    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the assistant made. ``arguments`` is the parsed JSON object of the call."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to a tool call, sent back in a user turn."""

    call_id: str
    content: str
    is_error: bool = False


Part: TypeAlias = Text | Thinking | ToolCall | ToolResult


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    parts: tuple[Part, ...]

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCall))


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    input_schema: Mapping[str, Any]
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """``auto`` | ``none`` | ``required`` | ``tool`` (then ``name`` says which tool)."""

    mode: Literal["auto", "none", "required", "tool"]
    name: str | None = None


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    model: str
    messages: tuple[Message, ...]
    max_tokens: int
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    temperature: float | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @classmethod
    def of(cls, prompt: object, completion: object) -> Usage:
        """Counts as a provider reported them; anything but an integer counts as 0."""
        return cls(
            prompt_tokens=prompt if isinstance(prompt, int) else 0,
            completion_tokens=completion if isinstance(completion, int) else 0,
        )


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """A decoded answer: parts in the order the provider produced them, plus what it reported."""

    parts: tuple[Part, ...]
    stop_reason: str | None
    model: str | None
    usage: Usage = field(default_factory=Usage)
    warnings: tuple[str, ...] = ()

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    def thinking(self) -> str | None:
        chunks = [p.text for p in self.parts if isinstance(p, Thinking)]
        return "".join(chunks) if chunks else None

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCall))


class CompletionResult(BaseModel):
    """The contract's result (I1): identical for every adapter."""

    model_config = ConfigDict(frozen=True)

    content: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    stop_reason: str | None


def user_prompt(prompt: str) -> tuple[Message, ...]:
    """The one-turn conversation that a bare prompt stands for."""
    return (Message(role="user", parts=(Text(prompt),)),)


def tool_specs(tools: Iterable[AnthropicTool] | Iterable[Mapping[str, Any]]) -> tuple[ToolSpec, ...]:
    """Anthropic-shape tool dicts → :class:`ToolSpec`; the caller's dicts are only read (I20)."""
    return tuple(
        ToolSpec(
            name=tool["name"],
            description=tool.get("description"),
            # I19: the schema goes through untouched; only a tool without one gets an open schema.
            input_schema=tool.get("input_schema", {"type": "object"}),
        )
        for tool in tools
    )


def anthropic_blocks(parts: Iterable[Part]) -> list[dict[str, Any]]:
    """Parts in the host-facing shape (Anthropic Messages content blocks)."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, Thinking):
            thinking: dict[str, Any] = {"type": "thinking", "thinking": part.text}
            if part.signature is not None:
                thinking["signature"] = part.signature
            blocks.append(thinking)
        elif isinstance(part, ToolCall):
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.arguments)})
        else:
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id, "content": part.content}
            if part.is_error:
                result["is_error"] = True
            blocks.append(result)
    return blocks


def render_content(turn: AssistantTurn) -> str:
    """The contract's ``content`` (I11): the text, or, when the turn calls tools, the JSON string of
    its Anthropic-shape blocks with a leading text block when there is text."""
    calls = turn.tool_calls()
    text = turn.text()
    if not calls:
        return text
    parts: list[Part] = [Text(text)] if text else []
    parts.extend(calls)
    return json.dumps(anthropic_blocks(parts), ensure_ascii=False, separators=(",", ":"))
