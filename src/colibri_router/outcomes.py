"""Error results a model can act on: the structured object every tool returns for a failure (an
:class:`~colibri_router.schema.ErrorResult`, which every tool's output schema describes beside its
success object), and its text form (``CODE: message`` then the same object as compact JSON, for hosts
that read only text)."""

from __future__ import annotations

import json
from typing import Any

from colibri_router.errors import ColibriError
from colibri_router.schema import Attempt, ErrorDetail, ErrorResult

INTERNAL_ERROR = "INTERNAL_ERROR"
# Said after a setting's error: the command that checks every setting at once, keys included.
DOCTOR_HINT = " (check every setting: `colibri-router doctor`)"


def error_structured(error: ColibriError) -> dict[str, Any]:
    detail = ErrorDetail(
        code=error.code,
        kind=error.kind,
        message=error.message + (DOCTOR_HINT if error.kind == "CONFIG_ERROR" else ""),
        provider=error.provider,
        model=error.model,
        status=error.status,
        retryable=error.retryable_later,
        retry_after_s=error.retry_after,
        details=error.details,
    )
    # Through the model of every tool's error object, which its output schema describes.
    attempts = [Attempt.model_validate(attempt) for attempt in error.attempts] or None
    structured: dict[str, Any] = ErrorResult(error=detail, attempts=attempts).model_dump()
    return structured


def internal_error() -> ColibriError:
    error = ColibriError("unexpected failure inside colibri-router; see the server log")
    error.code = INTERNAL_ERROR
    return error


def error_text(error: ColibriError, structured: dict[str, Any]) -> str:
    """``CODE: message`` (the message as ``structured`` says it), then ``structured`` as compact JSON."""
    message = structured["error"]["message"]
    return f"{error.code}: {message}\n{json.dumps(structured, ensure_ascii=False, separators=(',', ':'))}"
