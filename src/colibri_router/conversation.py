"""Provider-agnostic conversation types: what goes down to an adapter and what comes back up.

Every adapter encodes a :class:`CompletionRequest` into its provider's wire JSON and decodes the
provider's answer into an :class:`AssistantTurn`. Nothing here knows about HTTP or any provider.
The types are frozen so that no layer can mutate what a caller handed in (docs/python-api.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pydantic import BaseModel, ConfigDict

Role: TypeAlias = Literal["user", "assistant"]
Reasoning: TypeAlias = Literal["off", "low", "medium", "high"]


class AnthropicTool(TypedDict):
    """A tool definition in Anthropic's shape, the shape MCP hosts already speak."""

    name: str
    description: NotRequired[str]
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ProviderState:
    """Opaque values one wire issued with a part and needs back unchanged on later requests (Gemini's
    call ``id`` and ``thoughtSignature``). Only the codec of ``wire`` reads it; every other codec
    ignores it, so one provider's state never reaches another."""

    wire: str
    values: Mapping[str, str]

    def to_json(self) -> dict[str, str]:
        return {"wire": self.wire, **self.values}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ProviderState | None:
        wire = raw.get("wire")
        if not isinstance(wire, str) or not wire:
            return None
        return cls(wire, {key: value for key, value in raw.items() if key != "wire" and isinstance(value, str)})

    def get(self, wire: str, key: str) -> str | None:
        """The value ``key`` if this state was issued by ``wire``, else None."""
        return self.values.get(key) if self.wire == wire else None


@dataclass(frozen=True, slots=True)
class Text:
    text: str
    state: ProviderState | None = None


@dataclass(frozen=True, slots=True)
class Thinking:
    """Reasoning text (Kimi ``reasoning_content``, Claude ``thinking``); the signature is Claude's."""

    text: str
    signature: str | None = None
    state: ProviderState | None = None


@dataclass(frozen=True, slots=True)
class RedactedThinking:
    """Claude's encrypted reasoning: ``data`` is opaque and goes back to Claude unchanged."""

    data: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the assistant made. ``arguments`` is the parsed JSON object of the call."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    state: ProviderState | None = None


MediaKind: TypeAlias = Literal["image", "document"]
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
PDF_TYPE = "application/pdf"


@dataclass(frozen=True, slots=True)
class Media:
    """An image or a document (a PDF), by content or by URL: each wire encodes it in its own shape.

    ``data`` is the content in base64, the form every wire sends, so it is encoded once, when read.
    ``title`` names a document (a file's name; OpenAI's file parts need one)."""

    kind: MediaKind
    media_type: str
    data: str | None = None
    url: str | None = None
    title: str | None = None

    def data_url(self) -> str:
        """``data:<type>;base64,<data>``, or the URL for media given by URL."""
        return f"data:{self.media_type};base64,{self.data}" if self.data is not None else self.url or ""

    @property
    def size(self) -> int:
        """The content's size in bytes (0 for media by URL)."""
        return len(self.data) * 3 // 4 if self.data else 0


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to a tool call, sent back in a user turn; ``media``: images or documents it returned
    (a screenshot), after its text."""

    call_id: str
    content: str
    is_error: bool = False
    media: tuple[Media, ...] = ()


Part: TypeAlias = Text | Thinking | RedactedThinking | ToolCall | ToolResult | Media


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


OutputForm: TypeAlias = Literal["strict_schema", "schema", "json_mode", "tool"]


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """The answer's shape as the request asks for it: the form the model supports (registry data,
    colibri_router.providers.structured), a name, and the schema as it goes out (already made strict
    when the form needs it). Each codec renders it in its wire's field."""

    form: OutputForm
    name: str
    schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    model: str
    messages: tuple[Message, ...]
    max_tokens: int
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    temperature: float | None = None
    reasoning: Reasoning | None = None
    output: OutputSpec | None = None  # an answer in a JSON Schema's shape (response_schema)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts. ``prompt_tokens`` is the TOTAL input, cached and cache-written tokens included;
    ``completion_tokens`` includes reasoning tokens."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def of(
        cls,
        prompt: object,
        completion: object,
        *,
        cached: object = 0,
        cache_write: object = 0,
        reasoning: object = 0,
    ) -> Usage:
        """Counts as a provider reported them; anything but an integer counts as 0."""
        return cls(
            prompt_tokens=_count(prompt),
            completion_tokens=_count(completion),
            cached_tokens=_count(cached),
            cache_write_tokens=_count(cache_write),
            reasoning_tokens=_count(reasoning),
        )


def _count(value: object) -> int:
    # Exactly int, as JSON decodes a count: bool is an int subclass, and a provider's `true` is no count.
    return value if type(value) is int and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """A decoded answer: parts in the order the provider produced them, plus what it reported."""

    parts: tuple[Part, ...]
    stop_reason: str | None
    model: str | None
    usage: Usage = field(default_factory=Usage)
    warnings: tuple[str, ...] = ()
    # How the router had to repair the model's tool calling, as facts ("markers_parsed",
    # "tool_choice_nudged", "ids_repaired", "arguments_unparseable"): agent tests score them.
    repairs: tuple[str, ...] = ()

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    def thinking(self) -> str | None:
        chunks = [p.text for p in self.parts if isinstance(p, Thinking)]
        return "".join(chunks) if chunks else None

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCall))


class CompletionResult(BaseModel):
    """The library functions' result (docs/python-api.md): identical for every adapter."""

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
    """Anthropic-shape tool dicts → :class:`ToolSpec`; the caller's dicts are only read."""
    return tuple(
        ToolSpec(
            name=tool["name"],
            description=tool.get("description"),
            # The schema goes through untouched; only a tool without one gets an open schema.
            input_schema=tool.get("input_schema", {"type": "object"}),
        )
        for tool in tools
    )


def anthropic_blocks(parts: Iterable[Part]) -> list[dict[str, Any]]:
    """Parts in the host-facing shape (Anthropic Messages content blocks)."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            blocks.append(_with_state({"type": "text", "text": part.text}, part.state))
        elif isinstance(part, Thinking):
            thinking: dict[str, Any] = {"type": "thinking", "thinking": part.text}
            if part.signature is not None:
                thinking["signature"] = part.signature
            blocks.append(_with_state(thinking, part.state))
        elif isinstance(part, RedactedThinking):
            blocks.append({"type": "redacted_thinking", "data": part.data})
        elif isinstance(part, ToolCall):
            call = {"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.arguments)}
            blocks.append(_with_state(call, part.state))
        elif isinstance(part, Media):
            blocks.append(media_block(part))
        else:
            content: str | list[dict[str, Any]] = part.content
            if part.media:
                text = [{"type": "text", "text": part.content}] if part.content else []
                content = [*text, *(media_block(media) for media in part.media)]
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id, "content": content}
            if part.is_error:
                result["is_error"] = True
            blocks.append(result)
    return blocks


def media_block(media: Media) -> dict[str, Any]:
    """An image or document in Anthropic's shape (``source`` base64 or url)."""
    source: dict[str, Any] = (
        {"type": "url", "url": media.url}
        if media.data is None
        else {"type": "base64", "media_type": media.media_type, "data": media.data}
    )
    block: dict[str, Any] = {"type": media.kind, "source": source}
    if media.title and media.kind == "document":
        block["title"] = media.title
    return block


def _with_state(block: dict[str, Any], state: ProviderState | None) -> dict[str, Any]:
    if state is not None:
        block["provider_state"] = state.to_json()
    return block


def render_content(turn: AssistantTurn) -> str:
    """The result's ``content`` (docs/python-api.md): the text, or, when the turn calls tools, the JSON
    string of its Anthropic-shape blocks with a leading text block when there is text."""
    calls = turn.tool_calls()
    text = turn.text()
    if not calls:
        return text
    parts: list[Part] = [Text(text)] if text else []
    parts.extend(calls)
    return json.dumps(anthropic_blocks(parts), ensure_ascii=False, separators=(",", ":"))
