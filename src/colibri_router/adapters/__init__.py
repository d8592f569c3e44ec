"""The fold-in: the public names of every adapter, and the one import path for users and the server.

from colibri_router.adapters import create_kimi_completion, KimiCompletionOptions
from colibri_router.adapters import create_completion, CompletionOptions   # any registry provider
"""

from collections.abc import Mapping, Sequence
from typing import Any

from colibri_router.adapters.claude import (
    CLAUDE,
    ClaudeCompletionOptions,
    create_claude_completion,
    create_claude_completion_with_tools,
)
from colibri_router.adapters.kimi import (
    KIMI,
    KimiCompletionOptions,
    create_kimi_completion,
    create_kimi_completion_with_tools,
)
from colibri_router.adapters.prompt import CompletionOptions, complete_prompt
from colibri_router.conversation import AnthropicTool, CompletionResult
from colibri_router.errors import (
    AnthropicApiError,
    AnthropicConfigError,
    AnthropicTimeoutError,
    ApiError,
    ColibriError,
    ConfigError,
    DeadlineError,
    InvalidRequestError,
    KimiApiError,
    KimiConfigError,
    KimiTimeoutError,
)
from colibri_router.providers import BUILTIN, ProviderSpec, load_registry
from colibri_router.router.pipeline import DEFAULT_MAX_TOKENS, Completion, run_completion
from colibri_router.settings import load_settings

Provider = ProviderSpec
PROVIDERS: Mapping[str, ProviderSpec] = BUILTIN


def supports_tools(model: str, *, provider: str | None = None) -> bool:
    """Whether the provider that would serve ``model`` takes tool definitions (every built-in model family
    does; a config entry may say ``tools = false``)."""
    return load_registry().choose(provider, model, load_settings()).provider.tools


async def create_completion(
    prompt: str,
    *,
    provider: str,
    tools: Sequence[AnthropicTool] | Sequence[Mapping[str, Any]] = (),
    options: CompletionOptions | None = None,
) -> CompletionResult:
    """Send one user prompt to any registry provider (built-in or from the config file)."""
    return await complete_prompt(load_registry().get(provider), prompt, tools, options)


__all__ = [
    "CLAUDE",
    "DEFAULT_MAX_TOKENS",
    "KIMI",
    "PROVIDERS",
    "AnthropicApiError",
    "AnthropicConfigError",
    "AnthropicTimeoutError",
    "AnthropicTool",
    "ApiError",
    "ClaudeCompletionOptions",
    "ColibriError",
    "Completion",
    "CompletionOptions",
    "CompletionResult",
    "ConfigError",
    "DeadlineError",
    "InvalidRequestError",
    "KimiApiError",
    "KimiCompletionOptions",
    "KimiConfigError",
    "KimiTimeoutError",
    "Provider",
    "ProviderSpec",
    "create_claude_completion",
    "create_claude_completion_with_tools",
    "create_completion",
    "create_kimi_completion",
    "create_kimi_completion_with_tools",
    "run_completion",
    "supports_tools",
]
