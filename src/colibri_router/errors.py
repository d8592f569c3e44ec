"""The error tree. Every failure the router reports has a stable ``code``, an optional HTTP ``status``
and a ``retryable`` flag; hosts and scripts branch on ``code``, never on message text.

    ColibriError                      code, status, retryable
    ├── ConfigError                   no API key, unusable setting        (never retried)
    │   ├── KimiConfigError           KIMI_CONFIG_ERROR
    │   ├── AnthropicConfigError      ANTHROPIC_CONFIG_ERROR
    │   └── <Prefix>ConfigError       <PREFIX>_CONFIG_ERROR (every other provider, made on demand)
    ├── ApiError                      upstream said no, network failed, body malformed
    │   ├── KimiApiError              KIMI_API_ERROR | KIMI_RETRIES_EXHAUSTED
    │   ├── AnthropicApiError         ANTHROPIC_API_ERROR | ANTHROPIC_RETRIES_EXHAUSTED
    │   └── <Prefix>ApiError          <PREFIX>_API_ERROR | <PREFIX>_RETRIES_EXHAUSTED
    ├── DeadlineError                 the call's total deadline ran out
    │   ├── KimiTimeoutError          KIMI_TIMEOUT
    │   ├── AnthropicTimeoutError     ANTHROPIC_TIMEOUT
    │   └── <Prefix>TimeoutError      <PREFIX>_TIMEOUT
    ├── InvalidRequestError           INVALID_REQUEST: input no provider could accept
    ├── CostCapError                  BUDGET_EXCEEDED: the call's worst case is above max_cost_usd
    │                                 (the store's BudgetExceeded shares the code: a budget is reached)
    └── StoreError                    STORE_ERROR, kind STORE_UNAVAILABLE: the database a call needs
                                      cannot be reached or used (colibri_router.store.errors)

``<PREFIX>`` is the registry name upper-cased with every non-alphanumeric turned into ``_``
(``OPENAI``, ``KIMI_ANTHROPIC``, ``GPU_BOX``); ``kimi`` and ``claude`` keep ``KIMI`` and ``ANTHROPIC``.

Every error also has a ``kind`` an agent can act on (``RATE_LIMITED``, ``QUOTA_EXCEEDED``...; the list is
:data:`Kind`), whether a later identical call can succeed (:attr:`ColibriError.retryable_later`), and,
once the router knows them, the ``provider`` and ``model`` it concerned. ``retryable`` is narrower:
whether the router itself retries it (never a network error or a cut stream: contract I8).

Messages never contain API keys: they are built from status codes, the provider's error ``type``
and message, and our own text, never from request headers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from colibri_router.redaction import redact

Kind: TypeAlias = Literal[
    "AUTH_FAILED",
    "RATE_LIMITED",
    "QUOTA_EXCEEDED",
    "TIMEOUT",
    "MODEL_NOT_FOUND",
    "CONTEXT_LENGTH",
    "CONTENT_FILTERED",
    "NETWORK_ERROR",
    "PROVIDER_ERROR",
    "INVALID_REQUEST",
    "CONFIG_ERROR",
    "BUDGET_EXCEEDED",
    "STORE_UNAVAILABLE",
    "UNKNOWN",
]
# Kinds where a later identical call can succeed: waiting helps (rate limits, overload, 5xx, network,
# timeouts, a database that is restarting); it does not for quota, auth, bad requests, context length
# or a content filter.
RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"RATE_LIMITED", "PROVIDER_ERROR", "NETWORK_ERROR", "TIMEOUT", "STORE_UNAVAILABLE"}
)


class ColibriError(Exception):
    code: str = "COLIBRI_ERROR"
    kind: Kind = "UNKNOWN"
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    provider: str | None = None
    model: str | None = None
    attempts: tuple[dict[str, Any], ...] = ()  # set by the router: each model tried, in order

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def retryable_later(self) -> bool:
        """Whether a later identical call can succeed (what an agent reads as ``retryable``)."""
        return self.kind in RETRYABLE_KINDS

    def about(self, provider: str | None, model: str | None) -> ColibriError:
        """Record which provider and model the error concerned (kept if already known)."""
        self.provider = self.provider or provider
        self.model = self.model or model
        return self

    def __str__(self) -> str:
        return self.message

    def scrub(self, secret: str) -> None:
        """Remove ``secret`` (and anything credential-shaped) from this error and the errors it was
        raised from: an upstream may echo the key it was sent, and tracebacks print the whole chain."""
        error: BaseException | None = self
        while isinstance(error, ColibriError):
            error.message = redact(error.message, secret)
            error.args = (error.message,)
            error = error.__cause__ or error.__context__


class ConfigError(ColibriError):
    code = "CONFIG_ERROR"
    kind: Kind = "CONFIG_ERROR"


class InvalidRequestError(ColibriError):
    code = "INVALID_REQUEST"
    kind: Kind = "INVALID_REQUEST"


class ApiError(ColibriError):
    """An upstream failure. ``code`` is the API code, or the exhausted code after the last retry."""

    api_code: ClassVar[str] = "API_ERROR"
    exhausted_code: ClassVar[str] = "RETRIES_EXHAUSTED"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        exhausted: bool = False,
        kind: Kind = "PROVIDER_ERROR",
    ) -> None:
        super().__init__(message)
        self.code = self.exhausted_code if exhausted else self.api_code
        self.status = status
        self.error_type = error_type
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind

    def exhausted(self, attempts: int) -> ApiError:
        """The same failure, reported after ``attempts`` tries all failed."""
        return self.again(f"gave up after {attempts} attempts; last error: {self.message}", exhausted=True)

    def again(self, message: str, *, exhausted: bool = False) -> ApiError:
        """The same failure under a new message, no longer retried by the router."""
        return type(self)(
            message,
            status=self.status,
            error_type=self.error_type,
            retry_after=self.retry_after,
            exhausted=exhausted,
            kind=self.kind,
        )


class CostCapError(ColibriError):
    """The call's worst-case cost is above its ``max_cost_usd``: nothing was sent."""

    code = "BUDGET_EXCEEDED"
    kind: Kind = "BUDGET_EXCEEDED"


class DeadlineError(ColibriError):
    code = "TIMEOUT"
    kind: Kind = "TIMEOUT"


class KimiConfigError(ConfigError):
    code = "KIMI_CONFIG_ERROR"


class KimiApiError(ApiError):
    api_code = "KIMI_API_ERROR"
    exhausted_code = "KIMI_RETRIES_EXHAUSTED"


class KimiTimeoutError(DeadlineError):
    code = "KIMI_TIMEOUT"


class AnthropicConfigError(ConfigError):
    code = "ANTHROPIC_CONFIG_ERROR"


class AnthropicApiError(ApiError):
    api_code = "ANTHROPIC_API_ERROR"
    exhausted_code = "ANTHROPIC_RETRIES_EXHAUSTED"


class AnthropicTimeoutError(DeadlineError):
    code = "ANTHROPIC_TIMEOUT"


@dataclass(frozen=True, slots=True)
class ErrorFamily:
    """The error classes one provider raises, so shared code raises the right ones."""

    config: type[ConfigError]
    api: type[ApiError]
    timeout: type[DeadlineError]


KIMI_ERRORS = ErrorFamily(config=KimiConfigError, api=KimiApiError, timeout=KimiTimeoutError)
ANTHROPIC_ERRORS = ErrorFamily(config=AnthropicConfigError, api=AnthropicApiError, timeout=AnthropicTimeoutError)


class MalformedResponse(ValueError):
    """A response body that is JSON but not the shape the codec expects; becomes the provider's
    ``*_API_ERROR`` (status 200, not retried) in the pipeline."""


@functools.cache
def error_family(prefix: str) -> ErrorFamily:
    """The error classes whose codes start with ``prefix``: the landed Kimi and Anthropic classes for
    theirs, new subclasses (one set per prefix, so ``except`` clauses can tell providers apart) for
    every other provider."""
    for family in (KIMI_ERRORS, ANTHROPIC_ERRORS):
        if family.config.code == f"{prefix}_CONFIG_ERROR":
            return family
    stem = "".join(word.capitalize() for word in prefix.split("_"))
    config = type(f"{stem}ConfigError", (ConfigError,), {"code": f"{prefix}_CONFIG_ERROR", "__module__": __name__})
    api = type(
        f"{stem}ApiError",
        (ApiError,),
        {"api_code": f"{prefix}_API_ERROR", "exhausted_code": f"{prefix}_RETRIES_EXHAUSTED", "__module__": __name__},
    )
    timeout = type(f"{stem}TimeoutError", (DeadlineError,), {"code": f"{prefix}_TIMEOUT", "__module__": __name__})
    return ErrorFamily(config=config, api=api, timeout=timeout)
