"""Error bodies of OpenAI-wire hosts → :class:`UpstreamError`. Pure.

Shapes read: the nested ``{"error": {"message", "type", "code"}}`` (OpenAI, Moonshot, Groq, new vLLM),
the flat ``{"object": "error", "message", ...}`` (old vLLM, Mistral), and OpenRouter's
``{"error": {"code", "message", "metadata": {"raw": "<upstream body as a JSON string>"}}}``, whose
inner error is the one reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from colibri_router.wires.base import UpstreamError, error_text, json_or_none, nested_error, retry_after

# A 429 that means "out of money", not "slow down": a later identical call cannot succeed.
NON_RETRYABLE_TYPES = frozenset({"insufficient_quota", "exceeded_current_quota_error"})


def read_error(status: int, headers: Mapping[str, str], body: bytes) -> UpstreamError:
    data = json_or_none(body)
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        inner = _openrouter_inner(error)
        if inner is not None:
            return inner
        labels = {str(v) for v in (error.get("type"), error.get("code")) if isinstance(v, str | int) and v != ""}
        if _openrouter_moderation(error):
            return UpstreamError(message=str(error.get("message") or error_text(body)), kind="CONTENT_FILTERED")
        message = error.get("message")
        return UpstreamError(
            message=message if isinstance(message, str) and message else error_text(body),
            error_type=_label(error),
            retryable=False if labels & NON_RETRYABLE_TYPES else None,
            retry_after_s=retry_after(headers),
            labels=tuple(sorted(labels)),
        )
    if isinstance(data, dict) and isinstance(data.get("message"), dict):
        # Mistral's 422: {"message": {"detail": [pydantic errors]}} — say which field it refused.
        return UpstreamError(message=_mistral_detail(data["message"]), error_type=_label(data))
    return nested_error(body, headers)


def _openrouter_inner(error: Mapping[str, Any]) -> UpstreamError | None:
    metadata = error.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if not isinstance(raw, str) or not raw:
        return None
    inner = nested_error(raw.encode(), {})
    provider = metadata.get("provider_name") if isinstance(metadata, dict) else None
    outer = error.get("message")
    prefix = f"{outer} ({provider})" if isinstance(outer, str) and isinstance(provider, str) else outer or "upstream"
    return UpstreamError(message=f"{prefix}: {inner.message}", error_type=inner.error_type or _label(error))


def _openrouter_moderation(error: Mapping[str, Any]) -> bool:
    """OpenRouter's 403 for a moderation flag carries the reasons in ``metadata`` (not an auth failure)."""
    metadata = error.get("metadata")
    return isinstance(metadata, dict) and ("reasons" in metadata or "flagged_input" in metadata)


def _label(error: Mapping[str, Any]) -> str | None:
    for key in ("type", "code"):
        value = error.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
            return str(value)
    return None


def _mistral_detail(message: Mapping[str, Any]) -> str:
    details = message.get("detail")
    if not isinstance(details, list):
        return str(message)[:500]
    problems = []
    for detail in details[:5]:
        if isinstance(detail, dict):
            location = ".".join(str(p) for p in detail.get("loc", []) if p != "body")
            problems.append(f"{location}: {detail.get('msg', 'invalid')}")
    return "; ".join(problems) or str(message)[:500]
