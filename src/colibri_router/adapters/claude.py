"""Anthropic Claude: the same contract surface as the Kimi adapter, over the Messages API.

Claude's own quirks: tool_use IDs must match ``^[a-zA-Z0-9_-]+$`` (so IDs from Kimi are made safe,
deterministically, for calls and results alike), the system prompt is a top-level field, and
``stop_reason`` is already in the host's vocabulary, so it passes through as reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from colibri_router.adapters import anthropic_wire
from colibri_router.adapters.pipeline import CompletionOptions, Encoded, Provider, complete_prompt
from colibri_router.conversation import AnthropicTool, AssistantTurn, CompletionRequest, CompletionResult
from colibri_router.errors import ANTHROPIC_ERRORS, ErrorFamily
from colibri_router.settings import reveal
from colibri_router.toolcalls.assembly import AnthropicStreamAssembler, StreamAssembler
from colibri_router.toolcalls.ids import ids_for_claude

DEFAULT_MODEL = "claude-sonnet-4-5"
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True, kw_only=True, slots=True)
class ClaudeCompletionOptions(CompletionOptions):
    """Options of :func:`create_claude_completion`; the same fields as the Kimi options."""


@dataclass(frozen=True, slots=True)
class ClaudeCodec:
    label: str = "claude"
    errors: ErrorFamily = ANTHROPIC_ERRORS
    max_temperature: float = 1.0

    def endpoint(self, base_url: str, api_key: str) -> tuple[str, dict[str, str]]:
        return f"{base_url}/v1/messages", {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}

    def new_assembler(self) -> StreamAssembler:
        return AnthropicStreamAssembler()

    def encode(self, request: CompletionRequest) -> Encoded:
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": anthropic_wire.encode_messages(ids_for_claude(request.messages)),
        }
        if request.system:
            body["system"] = request.system
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.tools:
            body["tools"] = anthropic_wire.encode_tools(request.tools)
            if request.tool_choice is not None:
                body["tool_choice"] = anthropic_wire.encode_tool_choice(request.tool_choice)
        body["stream"] = True
        return Encoded(body=body)

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        return anthropic_wire.decode_body(body)


def is_claude_model(model: str) -> bool:
    return model.lower().startswith("claude")


CLAUDE = Provider(
    name="claude",
    default_model=DEFAULT_MODEL,
    errors=ANTHROPIC_ERRORS,
    key_variable="ANTHROPIC_API_KEY",
    claims_model=is_claude_model,
    connection_settings=lambda settings: (reveal(settings.anthropic_api_key), settings.anthropic_base_url),
    make_codec=lambda _settings: ClaudeCodec(),
)


async def create_claude_completion(prompt: str, options: ClaudeCompletionOptions | None = None) -> CompletionResult:
    """Send one user prompt to Claude and return the normalized result."""
    return await complete_prompt(CLAUDE, prompt, (), options)


async def create_claude_completion_with_tools(
    prompt: str,
    tools: Sequence[AnthropicTool],
    options: ClaudeCompletionOptions | None = None,
) -> CompletionResult:
    """Like :func:`create_claude_completion`, offering ``tools`` to the model."""
    return await complete_prompt(CLAUDE, prompt, tools, options)
