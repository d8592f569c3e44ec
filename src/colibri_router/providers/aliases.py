"""Model aliases: short names the host's model cannot get wrong, resolved before the provider is chosen.

Built-ins point at the current model of each family; the config file's ``[aliases]`` table adds the
user's own (and may redefine a built-in). A value is ``<provider>:<model>`` or a bare model name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

BUILTIN_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "sonnet": "claude:claude-sonnet-4-5",
        "opus": "claude:claude-opus-4-1",
        "haiku": "claude:claude-haiku-4-5",
        "kimi": "kimi:kimi-k2.6",
        "kimi-thinking": "kimi:kimi-k3",
        "gpt": "openai:gpt-5.5",
        "gpt-mini": "openai:gpt-5.4-mini",
        "gemini-pro": "gemini:gemini-3.1-pro-preview",
        "gemini-flash": "gemini:gemini-3.5-flash",
        "mistral-large": "mistral:mistral-large-latest",
        "mistral-small": "mistral:mistral-small-latest",
        "command": "cohere:command-a-03-2025",
        "deepseek": "deepseek:deepseek-chat",
    }
)


def resolve_alias(model: str | None, aliases: Mapping[str, str]) -> str | None:
    """The model an alias stands for; any other name unchanged. One step only: an alias never
    names another alias, so a cycle cannot form."""
    if model is None:
        return None
    return aliases.get(model, model)
