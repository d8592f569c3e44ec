"""Moonshot Kimi K2: the library functions (``create_kimi_completion``..., docs/python-api.md).

Every Kimi rule (K2 tool-call IDs, tool_choice limits, reasoning replay, marker parsing, the
temperature range, 128 tools) is the Kimi model profile's, applied by the codec wherever a Kimi
model is served (``colibri_router.providers.profiles``); this module only binds the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from colibri_router.adapters.prompt import CompletionOptions, complete_prompt
from colibri_router.conversation import AnthropicTool, CompletionResult
from colibri_router.providers import BUILTIN

# The library's Kimi default (docs/python-api.md); router_call without a model sends the registry's
# current default.
DEFAULT_MODEL = "kimi-k2-0905-preview"
KIMI = BUILTIN["kimi"]


@dataclass(frozen=True, kw_only=True, slots=True)
class KimiCompletionOptions(CompletionOptions):
    """Options of :func:`create_kimi_completion`; ``sleep`` takes seconds."""


async def create_kimi_completion(prompt: str, options: KimiCompletionOptions | None = None) -> CompletionResult:
    """Send one user prompt to Kimi and return the normalized result."""
    return await complete_prompt(KIMI, prompt, (), options, default_model=DEFAULT_MODEL)


async def create_kimi_completion_with_tools(
    prompt: str,
    tools: Sequence[AnthropicTool],
    options: KimiCompletionOptions | None = None,
) -> CompletionResult:
    """Like :func:`create_kimi_completion`, offering Anthropic-shape ``tools`` to the model."""
    return await complete_prompt(KIMI, prompt, tools, options, default_model=DEFAULT_MODEL)
