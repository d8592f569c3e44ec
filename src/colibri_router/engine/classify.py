"""Which ``kind`` an upstream failure is: the one place that decides it, for every provider.

Structured signals decide first (the provider's error type/code/status/reason, then the HTTP status);
a provider that marks a condition only in its message text contributes phrases through ONE table of
its own (its registry entry's ``error_phrases``), never through scattered ``in message`` checks.
The kinds: docs/errors.md. Sources: https://platform.openai.com/docs/guides/error-codes,
https://docs.anthropic.com/en/api/errors, https://ai.google.dev/gemini-api/docs/troubleshooting,
https://platform.moonshot.ai/docs/api/chat.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from colibri_router.errors import Kind

# Error types/codes/statuses/reasons as providers send them (matched case-insensitively).
LABEL_KINDS: Mapping[str, Kind] = {
    # out of money: a later call cannot succeed
    "insufficient_quota": "QUOTA_EXCEEDED",
    "exceeded_current_quota_error": "QUOTA_EXCEEDED",
    "billing_error": "QUOTA_EXCEEDED",
    "monthly_quota": "QUOTA_EXCEEDED",  # Cohere's trial key capped for the month (wires/cohere)
    # slow down
    "rate_limit_exceeded": "RATE_LIMITED",
    "rate_limit_error": "RATE_LIMITED",
    "rate_limited": "RATE_LIMITED",
    "rate_limit_reached_error": "RATE_LIMITED",
    "resource_exhausted": "RATE_LIMITED",
    # overload and server trouble
    "overloaded_error": "PROVIDER_ERROR",
    "engine_overloaded_error": "PROVIDER_ERROR",
    "capacity_exceeded": "PROVIDER_ERROR",
    "unavailable": "PROVIDER_ERROR",
    "internal": "PROVIDER_ERROR",
    "api_error": "PROVIDER_ERROR",
    "server_error": "PROVIDER_ERROR",
    # who is calling
    "invalid_api_key": "AUTH_FAILED",
    "authentication_error": "AUTH_FAILED",
    "invalid_authentication_error": "AUTH_FAILED",
    "permission_error": "AUTH_FAILED",
    "permission_denied": "AUTH_FAILED",
    "unauthenticated": "AUTH_FAILED",
    "api_key_invalid": "AUTH_FAILED",
    "unauthorized": "AUTH_FAILED",
    # what was asked
    "model_not_found": "MODEL_NOT_FOUND",
    "not_found_error": "MODEL_NOT_FOUND",
    "not_found": "MODEL_NOT_FOUND",
    "context_length_exceeded": "CONTEXT_LENGTH",
    "content_filter": "CONTENT_FILTERED",
    "content_policy_violation": "CONTENT_FILTERED",
    "deadline_exceeded": "TIMEOUT",
    "timeout": "TIMEOUT",
    "invalid_request_error": "INVALID_REQUEST",
    "invalid_argument": "INVALID_REQUEST",
    "tool_use_failed": "INVALID_REQUEST",
}
# Labels too generic to outrank a phrase: an `invalid_request_error` may well be a context overflow.
_GENERIC_LABELS = frozenset({"invalid_request_error", "invalid_argument", "not_found", "api_error"})
# Labels that say only "it failed on our side" (Anthropic's `api_error`, OpenAI's `server_error`, gRPC's
# INTERNAL/UNAVAILABLE, a gateway's default): a status that names the failure (408 and 504: time ran out)
# says more than they do, so they are set aside when it does.
_SERVER_TROUBLE_LABELS = frozenset({"api_error", "server_error", "internal", "internal_server_error", "unavailable"})


def classify(
    status: int | None,
    labels: Iterable[str | None],
    message: str,
    phrases: Mapping[Kind, tuple[str, ...]],
) -> Kind:
    """The kind of an upstream failure from its HTTP status, the provider's labels and its message."""
    known = [label.lower() for label in labels if label]
    if status in (408, 504):
        known = [label for label in known if label not in _SERVER_TROUBLE_LABELS]
    for label in known:
        if label in LABEL_KINDS and label not in _GENERIC_LABELS:
            return LABEL_KINDS[label]
    lowered = message.lower()
    for kind, texts in phrases.items():
        if any(text in lowered for text in texts):
            return kind
    for label in known:
        if label in LABEL_KINDS:
            return LABEL_KINDS[label]
    return status_kind(status)


def status_kind(status: int | None) -> Kind:
    if status is None:
        return "UNKNOWN"
    if status in (401, 403):
        return "AUTH_FAILED"
    if status == 402:
        return "QUOTA_EXCEEDED"
    if status == 404:
        return "MODEL_NOT_FOUND"
    if status in (408, 504):
        return "TIMEOUT"
    if status == 413:
        return "CONTEXT_LENGTH"
    if status == 429:
        return "RATE_LIMITED"
    if status == 498 or status >= 500:  # 498: Groq's flex capacity; 529: Anthropic's overload
        return "PROVIDER_ERROR"
    if 400 <= status < 500:
        return "INVALID_REQUEST"
    return "PROVIDER_ERROR"  # a 200 that was malformed or cut
