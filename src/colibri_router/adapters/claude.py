"""Anthropic Claude: the same library functions as the Kimi adapter, over the Messages API
(docs/python-api.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from colibri_router.adapters.prompt import CompletionOptions, complete_prompt
from colibri_router.conversation import AnthropicTool, CompletionResult
from colibri_router.providers import BUILTIN

CLAUDE = BUILTIN["claude"]
DEFAULT_MODEL = CLAUDE.default_model


@dataclass(frozen=True, kw_only=True, slots=True)
class ClaudeCompletionOptions(CompletionOptions):
    """Options of :func:`create_claude_completion`; the same fields as the Kimi options."""


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
