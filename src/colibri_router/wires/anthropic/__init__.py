"""The Anthropic Messages wire: Claude, Kimi's Anthropic-compatible endpoint, and custom hosts.

Claude's own rules: tool_use IDs must match ``^[a-zA-Z0-9_-]+$`` (so IDs from Kimi are made safe,
deterministically, for calls and results alike), the system prompt is a top-level field, and
``stop_reason`` is already in the host's vocabulary. Extended thinking: the one ``reasoning`` control
becomes a ``budget_tokens``; signed ``thinking`` and ``redacted_thinking`` blocks go back unchanged.
Usage reports cached and cache-written input apart from ``input_tokens``; the total is their sum.
Prompt caching: cache breakpoints on the tools, the system prompt and the last user turn (three of
the four Anthropic allows). A tool loop re-sends its whole history every turn, so this is where most
of a loop's input cost goes; a breakpoint closing less than the model's minimum is simply not cached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from colibri_router.conversation import (
    AssistantTurn,
    CompletionRequest,
    Media,
    Message,
    Part,
    RedactedThinking,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
    media_block,
)
from colibri_router.errors import MalformedResponse
from colibri_router.toolcalls.arguments import arguments_object
from colibri_router.toolcalls.assembly import StreamAssembler
from colibri_router.toolcalls.ids import ids_for_claude
from colibri_router.wires.anthropic.assembly import AnthropicStreamAssembler
from colibri_router.wires.base import Dialect, Encoded, UpstreamError, listed_names, nested_error
from colibri_router.wires.output import anthropic_output_config
from colibri_router.wires.rules import THINKING_BUDGETS

ANTHROPIC_VERSION = "2023-06-01"
TOOL_CHOICES = {"auto": "auto", "none": "none", "required": "any", "tool": "tool"}
CACHE_BREAKPOINT = {"type": "ephemeral"}


@dataclass(frozen=True, slots=True)
class AnthropicCodec:
    dialect: Dialect

    def endpoint(self, base_url: str, api_key: str | None, model: str) -> tuple[str, dict[str, str]]:
        headers = {**self.dialect.headers(api_key, "x-api-key", "{}"), "anthropic-version": ANTHROPIC_VERSION}
        return f"{base_url}/v1/messages", headers

    def new_assembler(self) -> StreamAssembler:
        return AnthropicStreamAssembler()

    def encode(self, request: CompletionRequest) -> Encoded:
        self.dialect.check_tool_count(request)
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": encode_messages(ids_for_claude(request.messages)),
        }
        if request.system:
            body["system"] = request.system
        if request.temperature is not None:
            body["temperature"] = request.temperature
        choice = request.tool_choice
        warnings = self._encode_thinking(request, body)
        if "thinking" in body and choice is not None and choice.mode in ("required", "tool"):
            # Anthropic refuses forced tool use while thinking is on.
            warnings.append(f"tool_choice {choice.mode} is not allowed with thinking on: sent auto")
            choice = ToolChoice(mode="auto")
        if request.tools:
            body["tools"] = encode_tools(request.tools)
            if choice is not None:
                body["tool_choice"] = encode_tool_choice(choice)
        output_config = anthropic_output_config(request.output) if request.output else None
        if output_config is not None:
            body["output_config"] = output_config
        if self.dialect.prompt_cache:
            mark_cache_breakpoints(body)
        body["stream"] = True
        return Encoded(body=body, warnings=tuple(warnings))

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        return decode_body(body)

    def read_error(self, status: int, headers: Mapping[str, str], body: bytes) -> UpstreamError:
        return nested_error(body, headers)

    def model_list_endpoint(self, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
        _, headers = self.endpoint(base_url, api_key, "")
        return f"{base_url}/v1/models", headers

    def decode_model_list(self, body: Mapping[str, Any]) -> list[str]:
        return listed_names(body, "data", "id")

    def _encode_thinking(self, request: CompletionRequest, body: dict[str, Any]) -> list[str]:
        if request.reasoning is None or request.reasoning == "off":
            if request.reasoning == "off" and self.dialect.profile.reasoning_always_on:
                return [f"reasoning off: {request.model} always reasons and cannot switch it off"]
            return []
        if not self.dialect.profile.thinking_budget:
            return [f"reasoning {request.reasoning}: {request.model} takes no thinking budget here; sent nothing"]
        budget = THINKING_BUDGETS[request.reasoning]
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        warnings = []
        if request.max_tokens <= budget:
            # The budget is part of max_tokens, which must exceed it.
            body["max_tokens"] = budget + request.max_tokens
            warnings.append(f"max_tokens raised to {body['max_tokens']} to fit the thinking budget of {budget}")
        if body.pop("temperature", None) is not None:
            warnings.append("temperature not sent: Anthropic accepts only its default while thinking")
        return warnings


def mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Breakpoints after the tools, the system prompt and the last user turn (each caches what precedes it)."""
    if body.get("tools"):
        body["tools"][-1] = {**body["tools"][-1], "cache_control": CACHE_BREAKPOINT}
    if "system" in body:
        body["system"] = [{"type": "text", "text": body["system"], "cache_control": CACHE_BREAKPOINT}]
    last_user = next((m for m in reversed(body["messages"]) if m["role"] == "user"), None)
    if last_user is not None and last_user["content"]:
        last_user["content"][-1] = {**last_user["content"][-1], "cache_control": CACHE_BREAKPOINT}


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
    if isinstance(part, RedactedThinking):
        return {"type": "redacted_thinking", "data": part.data}
    if isinstance(part, ToolCall):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.arguments)}
    if isinstance(part, Media):
        return media_block(part)
    # Anthropic's tool results take images and documents beside their text: the screenshot stays there.
    content: str | list[dict[str, Any]] = part.content
    if part.media:
        content = [*([{"type": "text", "text": part.content}] if part.content else []), *map(media_block, part.media)]
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id, "content": content}
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
        usage=decode_usage(body.get("usage")),
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
    if kind == "redacted_thinking":
        data = block.get("data")
        return RedactedThinking(data) if isinstance(data, str) and data else None
    if kind == "tool_use":
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            raise MalformedResponse("a tool_use block has no id or name")
        return ToolCall(block["id"], block["name"], arguments_object(block.get("input")))
    return None  # server tools, future block types: nothing a host can act on


def decode_usage(usage: object) -> Usage:
    """``input_tokens`` counts only uncached input: the total adds the cache reads and writes."""
    if not isinstance(usage, dict):
        return Usage()
    counts = [usage.get(key) for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    total = sum(count for count in counts if isinstance(count, int) and not isinstance(count, bool))
    return Usage.of(total, usage.get("output_tokens"), cached=counts[1], cache_write=counts[2])


def make_codec(dialect: Dialect) -> AnthropicCodec:
    return AnthropicCodec(dialect)
