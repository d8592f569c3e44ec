"""The fold-in: the public names of every adapter, and the one import path for users and the server.

from colibri_router.adapters import create_kimi_completion, KimiCompletionOptions
"""

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
from colibri_router.adapters.pipeline import DEFAULT_MAX_TOKENS, Completion, Provider, run_completion
from colibri_router.conversation import AnthropicTool, CompletionResult
from colibri_router.errors import (
    AnthropicApiError,
    AnthropicConfigError,
    AnthropicTimeoutError,
    KimiApiError,
    KimiConfigError,
    KimiTimeoutError,
)

PROVIDERS: dict[str, Provider] = {provider.name: provider for provider in (KIMI, CLAUDE)}

__all__ = [
    "CLAUDE",
    "DEFAULT_MAX_TOKENS",
    "KIMI",
    "PROVIDERS",
    "AnthropicApiError",
    "AnthropicConfigError",
    "AnthropicTimeoutError",
    "AnthropicTool",
    "ClaudeCompletionOptions",
    "Completion",
    "CompletionResult",
    "KimiApiError",
    "KimiCompletionOptions",
    "KimiConfigError",
    "KimiTimeoutError",
    "Provider",
    "create_claude_completion",
    "create_claude_completion_with_tools",
    "create_kimi_completion",
    "create_kimi_completion_with_tools",
    "run_completion",
]
