"""The ``router_call`` tool's input and output, as pydantic models: they validate what a host sends,
generate the JSON schemas the host's model reads (so every field is described), and convert to and
from the provider-agnostic conversation types. Conversation input is in Anthropic Messages shape,
the shape MCP hosts already speak.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from colibri_router.conversation import (
    Media,
    Message,
    Part,
    ProviderState,
    RedactedThinking,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    user_prompt,
)
from colibri_router.media.kinds import media_of


class _Block(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _StatefulBlock(_Block):
    # Opaque to the host: a result's `message` carries it, and the next call sends it back as is.
    provider_state: dict[str, Any] | None = None

    def state(self) -> ProviderState | None:
        return ProviderState.from_json(self.provider_state) if self.provider_state else None


class TextBlock(_StatefulBlock):
    type: Literal["text"]
    text: str


class ThinkingBlock(_StatefulBlock):
    type: Literal["thinking"]
    thinking: str
    signature: str | None = None  # Claude's, sent back as is


class RedactedThinkingBlock(_Block):
    type: Literal["redacted_thinking"]
    data: str  # Claude's encrypted reasoning, sent back as is


class ToolUseBlock(_StatefulBlock):
    type: Literal["tool_use"]
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)

    @field_validator("input", mode="before")
    @classmethod
    def _null_is_no_arguments(cls, value: object) -> object:
        """A call made without arguments may come back as ``input: null``: it means ``{}``."""
        return {} if value is None else value


class MediaBlock(_Block):
    type: Literal["image", "document"]
    source: dict[str, Any] = Field(description='{"type":"base64","media_type","data"} or {"type":"url","url"}; PDF')
    _media: Media = PrivateAttr()

    @model_validator(mode="wrap")
    @classmethod
    def _readable(cls, data: Any, handler: Any) -> MediaBlock:
        block: MediaBlock = handler(data)
        # A document's `title` is kept without a schema field (every field costs the host tokens).
        title = data.get("title") if isinstance(data, dict) else None
        block._media = media_of(block.type, block.source, title if isinstance(title, str) else None)
        return block

    def to_media(self) -> Media:
        return self._media


class ToolResultBlock(_Block):
    type: Literal["tool_result"]
    tool_use_id: str = Field(min_length=1, description="The id of the tool_use this answers.")
    content: str | list[TextBlock | MediaBlock] = Field(
        "", description="The tool's output: text, or text/image blocks."
    )
    is_error: bool = False

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def media(self) -> tuple[Media, ...]:
        if isinstance(self.content, str):
            return ()
        return tuple(b.to_media() for b in self.content if isinstance(b, MediaBlock))


ContentBlock = Annotated[
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | MediaBlock,
    Field(discriminator="type"),
]
_ASSISTANT_ONLY = (ThinkingBlock, RedactedThinkingBlock, ToolUseBlock)


class InputMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    role: Literal["user", "assistant"]
    content: str | list[ContentBlock] = Field(
        description="Text, or blocks: text, tool_use, thinking (assistant: a result's `message` as is), "
        "tool_result, image, document (user)."
    )

    @model_validator(mode="after")
    def _blocks_fit_role(self) -> InputMessage:
        if isinstance(self.content, str):
            return self
        for block in self.content:
            if self.role == "user" and isinstance(block, _ASSISTANT_ONLY):
                raise ValueError(f"a {block.type} block belongs in an assistant message, not a user message")
            if self.role == "assistant" and isinstance(block, ToolResultBlock | MediaBlock):
                raise ValueError(f"a {block.type} block belongs in a user message, not an assistant message")
        return self

    def to_message(self) -> Message:
        if isinstance(self.content, str):
            return Message(role=self.role, parts=(Text(self.content),))
        return Message(role=self.role, parts=tuple(_to_part(block) for block in self.content))


def _to_part(
    block: TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | MediaBlock,
) -> Part:
    if isinstance(block, TextBlock):
        return Text(block.text, block.state())
    if isinstance(block, ThinkingBlock):
        return Thinking(block.thinking, block.signature, block.state())
    if isinstance(block, RedactedThinkingBlock):
        return RedactedThinking(block.data)
    if isinstance(block, ToolUseBlock):
        return ToolCall(block.id, block.name, block.input, block.state())
    if isinstance(block, MediaBlock):
        return block.to_media()
    return ToolResult(block.tool_use_id, block.text(), block.is_error, block.media())


class ToolDefinition(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    input_schema: dict[str, Any] = Field(description="JSON Schema of the tool's input object.")

    def to_spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, input_schema=self.input_schema, description=self.description)


class NamedToolChoice(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["tool"]
    name: str = Field(min_length=1)


class RouterCallInput(BaseModel):
    """Arguments of ``router_call``. Give exactly one of ``prompt`` or ``messages``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: str | None = Field(None, min_length=1, description="One user message; or `messages`, not both.")
    messages: list[InputMessage] | None = Field(
        None,
        min_length=1,
        # The tool loop (append the result's `message`, then tool_result blocks) is in the tool's description.
        description="The conversation (Anthropic Messages shape), ending with a user turn.",
    )
    provider: str | None = Field(
        None,
        min_length=1,
        description=(
            "Which service answers; absent: the one `model` names (`<provider>:<model>`, claude-*...), "
            "else COLIBRI_DEFAULT_PROVIDER."
        ),
    )
    model: str | None = Field(
        None, min_length=1, description="Model name, or `<provider>:<model>`; the provider's default when absent."
    )
    system_prompt: str | None = Field(None, description="System instructions for the model.")
    max_tokens: int | None = Field(None, ge=1, description="Max output tokens (default 1024).")
    temperature: float | None = Field(
        None, ge=0, le=2, description="Sampling temperature, clamped to the provider's range."
    )
    tools: list[ToolDefinition] | None = Field(None, description="Tools the model may call (Anthropic shape).")
    tool_choice: Literal["auto", "none", "required"] | NamedToolChoice | None = Field(
        None,
        description=('auto (default), none, required (some tool), or {"type":"tool","name"} (that tool).'),
    )
    reasoning: Literal["off", "low", "medium", "high"] | None = Field(
        None, description="How much the model reasons; absent: the provider's default."
    )
    timeout_s: float | None = Field(
        None, gt=0, description="Seconds for the whole call, retries included (default 300)."
    )
    thread_id: str | None = Field(
        None,
        min_length=1,
        description='"new" starts a stored thread, an id continues one (then send only the new turns).',
    )
    max_cost_usd: float | None = Field(
        None, ge=0, description="Refuse the call (nothing sent) if its worst-case cost is above this."
    )
    fallback: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None,
        max_length=8,
        description="Models to try in turn if this one is rate-limited, out of quota, down or unknown.",
    )
    files: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="Paths, globs or directories read on the server into the last user turn.",
    )
    response_schema: dict[str, Any] | None = Field(None, description="JSON Schema the answer must match.")
    response_schema_name: str | None = Field(None, description="Its name (default answer).")
    background: Literal["auto"] | bool = Field("auto", description="true: job handle now; auto: after 40 s.")

    @field_validator("response_schema_name")
    @classmethod
    def _a_name(cls, name: str | None) -> str | None:
        # Checked here, not as a schema pattern: every byte of router_call's schema counts for hosts.
        if name is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
            raise ValueError("1-64 letters, digits, _ or -")
        return name

    @field_validator("response_schema")
    @classmethod
    def _a_json_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            from colibri_router.structured.validate import check_schema  # jsonschema loads only when used

            check_schema(schema)
        return schema

    @model_validator(mode="after")
    def _prompt_or_messages(self) -> RouterCallInput:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("give exactly one of `prompt` (a single user turn) or `messages` (a conversation)")
        return self

    def new_turns(self) -> list[dict[str, Any]]:
        """The call's turns as JSON dicts (what a thread stores)."""
        if self.messages is None:
            return [{"role": "user", "content": self.prompt or ""}]
        return [message.model_dump(mode="json", exclude_none=True) for message in self.messages]

    def conversation(self) -> tuple[Message, ...]:
        if self.messages is None:
            return user_prompt(self.prompt or "")
        return tuple(message.to_message() for message in self.messages)

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        return tuple(tool.to_spec() for tool in self.tools or ())

    def tool_choice_spec(self) -> ToolChoice | None:
        if self.tool_choice is None:
            return None
        if isinstance(self.tool_choice, NamedToolChoice):
            return ToolChoice(mode="tool", name=self.tool_choice.name)
        return ToolChoice(mode=self.tool_choice)


def _absent_not_null(schema: JsonDict) -> None:
    """A field dumped without its null: the schema names no default."""
    schema.pop("default", None)


class Attempt(BaseModel):
    provider: str
    model: str
    outcome: str = Field(description='"ok" or the error code.')
    kind: str | None
    latency_ms: int
    key: str | None = Field(
        default=None,
        exclude_if=lambda key: key is None,
        description="The API key's fingerprint, with several keys.",
        json_schema_extra=_absent_not_null,
    )


class ErrorDetail(BaseModel):
    code: str
    kind: str
    message: str
    provider: str | None
    model: str | None
    status: int | None
    retryable: bool = Field(description="Whether a later identical call can succeed.")
    retry_after_s: float | None
    details: dict[str, Any] | SkipJsonSchema[None] = Field(
        default=None,
        exclude_if=lambda details: details is None,
        description="INVALID_OUTPUT: `raw`.",
        json_schema_extra=_absent_not_null,
    )


# What every tool returns for a failure (the structuredContent of an isError result): each tool's
# output schema is its success object or this one (see colibri_router.server.generate_schemas). A
# comment, not a docstring: pydantic would publish a docstring in every tool's output schema.
class ErrorResult(BaseModel):
    error: ErrorDetail
    attempts: list[Attempt] | SkipJsonSchema[None] = Field(
        default=None,
        exclude_if=lambda attempts: attempts is None,
        description="Each model tried; when any was.",
        json_schema_extra=_absent_not_null,
    )


class ToolCallOut(BaseModel):
    id: str = Field(description="Provider-neutral id; answer it with a tool_result of this tool_use_id.")
    name: str
    input: dict[str, Any]


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: list[dict[str, Any]] = Field(description="Blocks: thinking?, text?, tool_use...")


class FileReadOut(BaseModel):
    path: str
    bytes: int
    tokens_estimated: int
    encoding: str | None = Field(
        default=None, exclude_if=lambda encoding: encoding is None, description="A text file's, when not UTF-8."
    )


class RouterCallResult(BaseModel):
    """What ``router_call`` returns (``structuredContent``)."""

    provider: str = Field(description="The service that answered.")
    content: str = Field(description="The answer text.")
    model: str = Field(description="The model that answered, as the provider reported it.")
    prompt_tokens: int = Field(description="Input tokens, cached and cache-written ones included.")
    completion_tokens: int = Field(description="Output tokens, reasoning included.")
    cached_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: float | None = Field(description="What the call cost; null when the price is unknown.")
    price_source: str | None
    latency_ms: int = Field(description="Milliseconds from sending the request to the complete answer.")
    ttft_ms: int | None = Field(description="Milliseconds to the first streamed token; null if none streamed.")
    stop_reason: str | None = Field(description="end_turn, tool_use, max_tokens, refusal, or the provider's own.")
    tool_calls: list[ToolCallOut] = Field(description="Tool calls the model made, in order.")
    thinking: str | None = Field(description="The model's reasoning text, when it returned any.")
    warnings: list[str] = Field(description="Adjustments the router made to fit the provider, in plain words.")
    message: AssistantMessage | None = Field(
        description=(
            "With tool calls: this assistant turn to append to `messages` as is. Null otherwise: append "
            '{"role": "assistant", "content": <content>}.'
        )
    )
    attempts: list[Attempt] = Field(description="Each model tried, in order (fallbacks).")
    thread_id: str | None = Field(default=None, description="The thread this call continued; null for stateless calls.")
    files_read: list[FileReadOut] | None = Field(
        default=None, exclude_if=lambda files: files is None, description="What `files` sent; only with `files`."
    )
    parsed: Any = Field(
        default=None,
        exclude_if=lambda parsed: parsed is None,
        description="The answer as JSON valid for `response_schema`; only with it.",
    )
