"""Every provider's real error bodies → the kind an agent acts on, and whether a later call can succeed
(PROVIDER-FACTS.md §8.3, KIMI-FACTS.md "Errors")."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.engine.classify import classify
from colibri_router.engine.transport import http_error
from colibri_router.errors import RETRYABLE_KINDS, ConfigError, InvalidRequestError, KimiTimeoutError
from colibri_router.providers import BUILTIN
from colibri_router.wires import codec_for


def kind_of(provider: str, status: int, body: Any, headers: dict[str, str] | None = None) -> tuple[str, bool]:
    spec = BUILTIN[provider]
    codec = codec_for(spec, spec.default_model or "model")
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    error = http_error(httpx.Response(status, content=content, headers=headers or {}), codec)
    return error.kind, error.retryable_later


CASES = [
    # OpenAI
    (
        "openai",
        429,
        {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
        "RATE_LIMITED",
    ),
    (
        "openai",
        429,
        {
            "error": {
                "message": "You exceeded your current quota",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        },
        "QUOTA_EXCEEDED",
    ),
    (
        "openai",
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
        "CONTEXT_LENGTH",
    ),
    (
        "openai",
        404,
        {
            "error": {
                "message": "The model `gpt-9` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "code": "model_not_found",
            }
        },
        "MODEL_NOT_FOUND",
    ),
    (
        "openai",
        401,
        {
            "error": {
                "message": "Incorrect API key provided",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        },
        "AUTH_FAILED",
    ),
    (
        "openai",
        400,
        {
            "error": {
                "message": "Unsupported parameter: 'max_tokens'",
                "type": "invalid_request_error",
                "code": "unsupported_parameter",
            }
        },
        "INVALID_REQUEST",
    ),
    ("openai", 500, {"error": {"message": "The server had an error", "type": "server_error"}}, "PROVIDER_ERROR"),
    ("openai", 408, {"error": {"message": "Request timed out"}}, "TIMEOUT"),
    # Moonshot
    (
        "kimi",
        429,
        {"error": {"type": "engine_overloaded_error", "message": "The engine is currently overloaded"}},
        "PROVIDER_ERROR",
    ),
    (
        "kimi",
        429,
        {"error": {"type": "rate_limit_reached_error", "message": "Your account reached max RPM"}},
        "RATE_LIMITED",
    ),
    (
        "kimi",
        429,
        {"error": {"type": "exceeded_current_quota_error", "message": "Your account is suspended"}},
        "QUOTA_EXCEEDED",
    ),
    (
        "kimi",
        401,
        {"error": {"type": "invalid_authentication_error", "message": "Invalid Authentication"}},
        "AUTH_FAILED",
    ),
    ("kimi", 400, {"error": {"type": "content_filter", "message": "The request was rejected"}}, "CONTENT_FILTERED"),
    # Anthropic
    (
        "claude",
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        "PROVIDER_ERROR",
    ),
    (
        "claude",
        429,
        {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "Number of request tokens has exceeded your per-minute rate limit",
            },
        },
        "RATE_LIMITED",
    ),
    (
        "claude",
        400,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"},
        },
        "CONTEXT_LENGTH",
    ),
    (
        "claude",
        401,
        {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
        "AUTH_FAILED",
    ),
    (
        "claude",
        404,
        {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-9"}},
        "MODEL_NOT_FOUND",
    ),
    # Mistral
    (
        "mistral",
        429,
        {"object": "error", "message": "Rate limit exceeded", "type": "rate_limited", "param": None, "code": "1300"},
        "RATE_LIMITED",
    ),
    (
        "mistral",
        400,
        {
            "object": "error",
            "message": "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.",
            "type": "invalid_function_call",
            "code": "3280",
        },
        "INVALID_REQUEST",
    ),
    (
        "mistral",
        400,
        {"object": "error", "message": "Invalid model: devstral-medium-2507", "type": "invalid_model", "code": "1500"},
        "MODEL_NOT_FOUND",
    ),
    # OpenRouter
    ("openrouter", 402, {"error": {"code": 402, "message": "Insufficient credits"}}, "QUOTA_EXCEEDED"),
    (
        "openrouter",
        403,
        {
            "error": {
                "code": 403,
                "message": "Input flagged",
                "metadata": {"reasons": ["violence"], "flagged_input": "..."},
            }
        },
        "CONTENT_FILTERED",
    ),
    (
        "openrouter",
        503,
        {"error": {"code": 503, "message": "No endpoints found that can handle the requested parameters."}},
        "PROVIDER_ERROR",
    ),
    (
        "openrouter",
        400,
        {
            "error": {
                "code": 400,
                "message": "Provider returned error",
                "metadata": {
                    "raw": json.dumps({"error": {"message": "This model's maximum context length is 262144 tokens"}}),
                    "provider_name": "Moonshot AI",
                },
            }
        },
        "CONTEXT_LENGTH",
    ),
    # Groq, vLLM
    ("groq", 498, {"error": {"message": "Capacity exceeded", "type": "capacity_exceeded"}}, "PROVIDER_ERROR"),
    (
        "groq",
        400,
        {
            "error": {
                "message": "Failed to call a function.",
                "type": "invalid_request_error",
                "code": "tool_use_failed",
            }
        },
        "INVALID_REQUEST",
    ),
    (
        "vllm",
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        "CONTEXT_LENGTH",
    ),
    (
        "vllm",
        404,
        {"error": {"message": "The model `x` does not exist.", "type": "NotFoundError", "code": 404}},
        "MODEL_NOT_FOUND",
    ),
    ("deepseek", 402, {"error": {"message": "Insufficient Balance", "type": "unknown_error"}}, "QUOTA_EXCEEDED"),
    ("together", 504, b"<html>Gateway Timeout</html>", "TIMEOUT"),
    # 408 and 504 are timeouts whatever generic type the body names (issue 21)
    ("claude", 504, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}, "TIMEOUT"),
    ("openai", 504, {"error": {"message": "The server had an error", "type": "server_error"}}, "TIMEOUT"),
    ("openai", 408, {"error": {"message": "Request timed out", "type": "server_error", "code": None}}, "TIMEOUT"),
    (
        "together",
        504,
        {"error": {"message": "Gateway Timeout", "type": "server_error", "code": "gateway_timeout"}},
        "TIMEOUT",
    ),
    ("gemini", 504, {"error": {"code": 504, "message": "Internal error", "status": "INTERNAL"}}, "TIMEOUT"),
    ("gemini", 504, {"error": {"code": 504, "message": "Try again later", "status": "UNAVAILABLE"}}, "TIMEOUT"),
    ("openai", 504, {"error": "Gateway Timeout"}, "TIMEOUT"),
    (
        "claude",
        500,
        {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
        "PROVIDER_ERROR",
    ),
]


@pytest.mark.parametrize(("provider", "status", "body", "kind"), CASES)
def test_real_error_bodies_get_their_kind(provider: str, status: int, body: Any, kind: str) -> None:
    assert kind_of(provider, status, body)[0] == kind


def test_retryable_means_a_later_identical_call_can_succeed() -> None:
    # SERVER_STOPPED: a job whose server stopped (docs/jobs.md); the same call can be made again.
    assert {
        "RATE_LIMITED",
        "PROVIDER_ERROR",
        "NETWORK_ERROR",
        "TIMEOUT",
        "STORE_UNAVAILABLE",
        "INVALID_OUTPUT",
        "SERVER_STOPPED",
    } == RETRYABLE_KINDS
    for provider, status, body, kind in CASES:
        assert kind_of(provider, status, body)[1] is (kind in RETRYABLE_KINDS), (provider, status)


def test_the_routers_own_errors_have_kinds() -> None:
    assert ConfigError("x").kind == "CONFIG_ERROR"
    assert InvalidRequestError("x").kind == "INVALID_REQUEST"
    assert KimiTimeoutError("x").kind == "TIMEOUT"
    assert not ConfigError("x").retryable_later


def test_phrases_count_only_after_structured_labels() -> None:
    """A structured quota label wins over a message that happens to mention the context."""
    assert classify(429, ["insufficient_quota"], "maximum context length", {"CONTEXT_LENGTH": ("context",)}) == (
        "QUOTA_EXCEEDED"
    )
    assert classify(400, ["invalid_request_error"], "prompt is too long", {"CONTEXT_LENGTH": ("too long",)}) == (
        "CONTEXT_LENGTH"
    )
    assert classify(None, [], "", {}) == "UNKNOWN"


GENERIC_SERVER_LABELS = ["api_error", "server_error", "internal", "unavailable", "internal_server_error"]


@given(
    status=st.sampled_from([408, 504]),
    labels=st.lists(st.sampled_from(GENERIC_SERVER_LABELS), max_size=3),
    message=st.text(max_size=40),
)
def test_a_timeout_status_outranks_a_generic_server_label(status: int, labels: list[str], message: str) -> None:
    """408/504 say what failed (time ran out); a generic "server trouble" label says only where."""
    assert classify(status, labels, message, {}) == "TIMEOUT"


def test_a_specific_label_still_outranks_a_timeout_status() -> None:
    assert classify(504, ["rate_limit_error"], "", {}) == "RATE_LIMITED"
    assert classify(408, ["insufficient_quota", "server_error"], "", {}) == "QUOTA_EXCEEDED"
