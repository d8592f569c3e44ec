"""The error tree. Every failure the router reports has a stable ``code``, an optional HTTP ``status``
and a ``retryable`` flag; hosts and scripts branch on ``code``, never on message text.

    ColibriError                      code, status, retryable
    ├── ConfigError                   no API key, unusable setting (never retried):
    │                                 CONFIG_ERROR, or <PREFIX>_CONFIG_ERROR
    ├── ApiError                      upstream said no, network failed, body malformed:
    │                                 <PREFIX>_API_ERROR | <PREFIX>_RETRIES_EXHAUSTED
    ├── DeadlineError                 the call's total deadline ran out: TIMEOUT, or <PREFIX>_TIMEOUT
    ├── InvalidRequestError           INVALID_REQUEST: input no provider could accept
    ├── InvalidOutputError            INVALID_OUTPUT: an answer that never matched response_schema
    ├── CostCapError                  BUDGET_EXCEEDED: the call's worst case is above max_cost_usd
    │                                 (the store's BudgetExceeded shares the code: a budget is reached)
    ├── ConfirmationDeclinedError     CONFIRMATION_DECLINED: the user refused (or did not answer) the
    │                                 question an expensive call asks first (colibri_router.confirmation)
    └── StoreError                    STORE_ERROR, kind STORE_UNAVAILABLE: the database a call needs
                                      cannot be reached or used (colibri_router.store.errors)

A class names a condition; which provider failed is data: a provider's errors carry its ``prefix``
and so their code (:func:`error_family` makes them for one prefix). ``<PREFIX>`` is the registry name
upper-cased with every non-alphanumeric turned into ``_`` (``OPENAI``, ``KIMI_ANTHROPIC``,
``GPU_BOX``); ``kimi`` and ``claude`` keep ``KIMI`` and ``ANTHROPIC``, and their errors keep the library's
class names too (``KimiConfigError``, ``KimiApiError``, ``KimiTimeoutError``, the same three
``Anthropic*``): subclasses that fix the prefix, so ``except KimiApiError`` still catches exactly Kimi's.

Every error also has a ``kind`` an agent can act on (``RATE_LIMITED``, ``QUOTA_EXCEEDED``...; the list is
:data:`Kind`), whether a later identical call can succeed (:attr:`ColibriError.retryable_later`), and,
once the router knows them, the ``provider`` and ``model`` it concerned. ``retryable`` is narrower:
whether the router itself retries it (never a network error or a cut stream: docs/errors.md, Retries).

Messages never contain API keys: they are built from status codes, the provider's error ``type``
and message, and our own text, never from request headers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

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
    "CONFIRMATION_DECLINED",
    "NOT_ALLOWED",
    "INVALID_OUTPUT",
    "SERVER_STOPPED",
    "CANCELLED",
    "UNKNOWN",
]
# Kinds where a later identical call can succeed: waiting helps (rate limits, overload, 5xx, network,
# timeouts, a database that is restarting); it does not for quota, auth, bad requests, context length
# or a content filter.
RETRYABLE_KINDS: frozenset[str] = frozenset(
    {
        "RATE_LIMITED",
        "PROVIDER_ERROR",
        "NETWORK_ERROR",
        "TIMEOUT",
        "STORE_UNAVAILABLE",
        "INVALID_OUTPUT",
        "SERVER_STOPPED",
    }
)


class ColibriError(Exception):
    code: str = "COLIBRI_ERROR"
    kind: Kind = "UNKNOWN"
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    provider: str | None = None
    model: str | None = None
    prefix: str | None = None  # a provider's code prefix (``OPENAI``), on the provider conditions below
    attempts: tuple[dict[str, Any], ...] = ()  # set by the router: each model tried, in order
    details: dict[str, Any] | None = None  # what the failure kept for the caller (INVALID_OUTPUT: the raw text)
    key_fingerprint: str | None = None  # the pool key it concerned, by fingerprint (docs/keys.md)

    def __init_subclass__(cls, *, prefix: str | None = None, **kwargs: Any) -> None:
        """``class KimiApiError(ApiError, prefix="KIMI")``: a provider's named class of a condition, its
        code the condition's with the prefix (``KIMI_API_ERROR``), derived rather than written twice."""
        super().__init_subclass__(**kwargs)
        if prefix is not None:
            cls.prefix = prefix
            cls.code = _coded(prefix, cls.code)

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
    """No API key, or a setting that cannot be used; never retried. ``CONFIG_ERROR``, or the provider's
    ``<PREFIX>_CONFIG_ERROR`` when raised with its ``prefix``."""

    code = "CONFIG_ERROR"
    kind: Kind = "CONFIG_ERROR"

    def __init__(self, message: str, *, prefix: str | None = None) -> None:
        super().__init__(message)
        self.prefix = prefix or self.prefix
        self.code = _coded(self.prefix, "CONFIG_ERROR")


class InvalidRequestError(ColibriError):
    code = "INVALID_REQUEST"
    kind: Kind = "INVALID_REQUEST"


class InvalidOutputError(ColibriError):
    """The model's answer did not match the call's ``response_schema``, even after one repair turn. A
    later call can succeed (models vary), so it is retryable; the raw answer is in ``details``."""

    code = "INVALID_OUTPUT"
    kind: Kind = "INVALID_OUTPUT"

    def __init__(
        self, message: str, *, raw: str, tokens: tuple[int, int] = (0, 0), cost_usd: float | None = 0.0
    ) -> None:
        super().__init__(message)
        self.details = {"raw": raw}
        # What the two answers cost: the ledger row of the failed call still counts them.
        self.tokens = tokens
        self.cost_usd = cost_usd


class ApiError(ColibriError):
    """An upstream failure: ``<PREFIX>_API_ERROR``, or ``<PREFIX>_RETRIES_EXHAUSTED`` after the last retry
    (``API_ERROR`` and ``RETRIES_EXHAUSTED`` without a prefix)."""

    code = "API_ERROR"

    def __init__(
        self,
        message: str,
        *,
        prefix: str | None = None,
        status: int | None = None,
        error_type: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        exhausted: bool = False,
        kind: Kind = "PROVIDER_ERROR",
    ) -> None:
        super().__init__(message)
        self.prefix = prefix or self.prefix
        self.code = _coded(self.prefix, "RETRIES_EXHAUSTED" if exhausted else "API_ERROR")
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
            prefix=self.prefix,
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


class ConfirmationDeclinedError(ColibriError):
    """The user declined the question asked before an expensive call, or gave no answer within the
    call's deadline: nothing was sent, and the same call would be asked again (never retryable)."""

    code = "CONFIRMATION_DECLINED"
    kind: Kind = "CONFIRMATION_DECLINED"


class DeadlineError(ColibriError):
    """The call's total deadline ran out: ``TIMEOUT``, or the provider's ``<PREFIX>_TIMEOUT``."""

    code = "TIMEOUT"
    kind: Kind = "TIMEOUT"

    def __init__(self, message: str, *, prefix: str | None = None) -> None:
        super().__init__(message)
        self.prefix = prefix or self.prefix
        self.code = _coded(self.prefix, "TIMEOUT")


def _coded(prefix: str | None, condition: str) -> str:
    return f"{prefix}_{condition}" if prefix else condition


# The library's names for Kimi's and Claude's errors (docs/python-api.md): each is its condition's class
# with the prefix fixed, so ``except KimiApiError`` catches Kimi's API errors and no other provider's.


class KimiConfigError(ConfigError, prefix="KIMI"):
    pass


class KimiApiError(ApiError, prefix="KIMI"):
    pass


class KimiTimeoutError(DeadlineError, prefix="KIMI"):
    pass


class AnthropicConfigError(ConfigError, prefix="ANTHROPIC"):
    pass


class AnthropicApiError(ApiError, prefix="ANTHROPIC"):
    pass


class AnthropicTimeoutError(DeadlineError, prefix="ANTHROPIC"):
    pass


@dataclass(frozen=True, slots=True)
class ErrorFamily:
    """The errors one provider raises: each condition's class with the provider's ``prefix``, so shared
    code raises the right codes."""

    prefix: str
    config_class: type[ConfigError] = ConfigError
    api_class: type[ApiError] = ApiError
    timeout_class: type[DeadlineError] = DeadlineError

    def config(self, message: str) -> ConfigError:
        return self.config_class(message, prefix=self.prefix)

    def api(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        exhausted: bool = False,
        kind: Kind = "PROVIDER_ERROR",
    ) -> ApiError:
        return self.api_class(
            message,
            prefix=self.prefix,
            status=status,
            error_type=error_type,
            retryable=retryable,
            retry_after=retry_after,
            exhausted=exhausted,
            kind=kind,
        )

    def timeout(self, message: str) -> DeadlineError:
        return self.timeout_class(message, prefix=self.prefix)


KIMI_ERRORS = ErrorFamily("KIMI", KimiConfigError, KimiApiError, KimiTimeoutError)
ANTHROPIC_ERRORS = ErrorFamily("ANTHROPIC", AnthropicConfigError, AnthropicApiError, AnthropicTimeoutError)
_NAMED_FAMILIES = {family.prefix: family for family in (KIMI_ERRORS, ANTHROPIC_ERRORS)}


class MalformedResponse(ValueError):
    """A response body that is JSON but not the shape the codec expects; becomes the provider's
    ``*_API_ERROR`` (status 200, not retried) in the pipeline."""


@functools.cache
def error_family(prefix: str) -> ErrorFamily:
    """The errors whose codes start with ``prefix``: Kimi's and Claude's named classes for theirs, the
    condition classes carrying the prefix for every other provider."""
    return _NAMED_FAMILIES.get(prefix) or ErrorFamily(prefix)
