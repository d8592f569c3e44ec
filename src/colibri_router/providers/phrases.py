"""Message phrases, one table per provider, for conditions a provider marks only in its message text
(docs/errors.md). Matched lower-cased, after the structured labels had their say."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from colibri_router.errors import Kind

Phrases = Mapping[Kind, tuple[str, ...]]

# OpenAI, DeepSeek and vLLM word a context overflow the same way.
OPENAI: Phrases = MappingProxyType(
    {
        "CONTEXT_LENGTH": ("maximum context length",),
        "QUOTA_EXCEEDED": ("exceeded your current quota",),
        "MODEL_NOT_FOUND": ("does not exist or you do not have access",),
    }
)
MOONSHOT: Phrases = MappingProxyType(
    {"CONTEXT_LENGTH": ("exceeded model token limit", "context length"), "MODEL_NOT_FOUND": ("not found the model",)}
)
# An account out of credit is a 400 invalid_request_error "Your credit balance is too low..."
# (anthropics/claude-quickstarts#229): a quota, which another key may still have.
ANTHROPIC: Phrases = MappingProxyType(
    {"CONTEXT_LENGTH": ("prompt is too long",), "QUOTA_EXCEEDED": ("credit balance is too low",)}
)
MISTRAL: Phrases = MappingProxyType(
    {"CONTEXT_LENGTH": ("too large for model with",), "MODEL_NOT_FOUND": ("invalid model",)}
)
OPENROUTER: Phrases = MappingProxyType(
    {"CONTEXT_LENGTH": ("maximum context length", "context length"), "MODEL_NOT_FOUND": ("is not a valid model id",)}
)
GROQ: Phrases = MappingProxyType(
    {"CONTEXT_LENGTH": ("maximum context length", "reduce the length"), "MODEL_NOT_FOUND": ("does not exist",)}
)
VLLM: Phrases = MappingProxyType(
    {"CONTEXT_LENGTH": ("maximum context length",), "MODEL_NOT_FOUND": ("does not exist",)}
)
GEMINI: Phrases = MappingProxyType(
    {"CONTEXT_LENGTH": ("input token count",), "MODEL_NOT_FOUND": ("is not found for api version",)}
)
COHERE: Phrases = MappingProxyType({"CONTEXT_LENGTH": ("too many tokens",), "MODEL_NOT_FOUND": ("model not found",)})
OLLAMA: Phrases = MappingProxyType({"MODEL_NOT_FOUND": ("not found, try pulling it first",)})
GENERIC: Phrases = MappingProxyType(
    {
        "CONTEXT_LENGTH": ("maximum context length", "context length", "context window"),
        "MODEL_NOT_FOUND": ("model not found",),
    }
)
