"""Gemini error bodies → :class:`UpstreamError` (https://ai.google.dev/gemini-api/docs/troubleshooting).

The body is ``{"error": {"code", "message", "status", "details": [...]}}``, sometimes wrapped in a
one-element array. The typed ``details`` decide what the status alone cannot:
- ``google.rpc.ErrorInfo`` with a reason ``API_KEY_*`` under a 400 is a rejected key, not a bad
  request: never retried, and the message is ours (it names the key's variables, never the key);
- ``google.rpc.QuotaFailure`` with a ``quotaId`` naming a per-day quota will not pass before the quota
  resets: not retried;
- ``google.rpc.RetryInfo.retryDelay`` is when to retry; failing that, the Retry-After header, a
  "Please retry in 34.07s" in the message, or a minute for a per-minute quota.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from colibri_router.toolcalls.assembly.base import as_object, as_text
from colibri_router.wires.base import UpstreamError, error_text, json_or_none, nested_error, retry_after

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_QUOTA_FAILURE = "type.googleapis.com/google.rpc.QuotaFailure"
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_DAILY_QUOTA = ("PerDay", "Daily")
_PER_MINUTE_QUOTA = "PerMinute"
_PER_MINUTE_WAIT_S = 60.0
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)s")  # google.protobuf.Duration in JSON: "47s", "0.5s"
_RETRY_IN_MESSAGE = re.compile(r"retry in ([0-9]+(?:\.[0-9]+)?)\s*(ms|s)\b", re.IGNORECASE)
KEY_REJECTED = (
    "Gemini rejected the API key ({reason}): set a valid key in GOOGLE_API_KEY or GEMINI_API_KEY "
    "(GOOGLE_API_KEY wins when both are set)"
)


def read_error(status: int, headers: Mapping[str, str], raw: bytes) -> UpstreamError:
    error = _error_object(json_or_none(raw))
    if error is None:
        return nested_error(raw, headers)
    details = [detail for detail in _list(error.get("details")) if isinstance(detail, dict)]
    status_name = as_text(error.get("status")) or None
    reason = next((as_text(d.get("reason")) for d in details if d.get("@type") == _ERROR_INFO), "")
    if reason.startswith("API_KEY_"):
        return UpstreamError(message=KEY_REJECTED.format(reason=reason), error_type=reason, retryable=False)
    message = as_text(error.get("message")) or error_text(raw)
    quota_ids = [
        as_text(as_object(violation).get("quotaId"))
        for detail in details
        if detail.get("@type") == _QUOTA_FAILURE
        for violation in _list(detail.get("violations"))
    ]
    if any(marker in quota_id for quota_id in quota_ids for marker in _DAILY_QUOTA):
        return UpstreamError(
            message=f"{message} (a per-day quota: it resets at midnight Pacific time, so the call is not retried)",
            error_type=status_name,
            retryable=False,
            kind="QUOTA_EXCEEDED",  # the key's quota is spent: another key may still have some (docs/keys.md)
        )
    wait = _retry_delay(details)
    if wait is None:
        wait = retry_after(headers)
    if wait is None:
        wait = _delay_in_message(message)
    if wait is None and any(_PER_MINUTE_QUOTA in quota_id for quota_id in quota_ids):
        wait = _PER_MINUTE_WAIT_S
    return UpstreamError(message=message, error_type=status_name or reason or None, retry_after_s=wait)


def _error_object(data: object) -> dict[str, Any] | None:
    if isinstance(data, list) and len(data) == 1:
        data = data[0]  # sometimes a one-element array: [{"error": {...}}]
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _retry_delay(details: list[dict[str, Any]]) -> float | None:
    for detail in details:
        if detail.get("@type") == _RETRY_INFO:
            match = _DURATION.fullmatch(as_text(detail.get("retryDelay")).strip())
            if match:
                return float(match.group(1))
    return None


def _delay_in_message(message: str) -> float | None:
    match = _RETRY_IN_MESSAGE.search(message)
    if match is None:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "ms" else value
