"""One HTTP exchange with an upstream, for every provider: POST JSON, read the answer, map failures.

The answer is read the same way whatever the provider: an SSE stream is fed event by event to the
provider's assembler, which rebuilds the body a non-streamed call would have returned; a JSON
answer (an upstream or proxy that ignored ``stream: true``) is decoded as is. Either way the
adapter's decoder sees one shape. httpx failures are mapped here and only here, into the
provider's :class:`~colibri_router.errors.ApiError`: status and the provider's error ``type``
decide, never message substrings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx
from httpx_sse import EventSource

from colibri_router.errors import ApiError, ErrorFamily
from colibri_router.progress import CallProgress
from colibri_router.retry import parse_retry_after
from colibri_router.toolcalls.assembly import StreamAssembler, StreamErrorEvent, StreamProtocolError

# Moonshot answers 429 both for "slow down" and for "out of money"; only the first passes with time.
NON_RETRYABLE_ERROR_TYPES = frozenset({"exceeded_current_quota_error"})
# An error event at the very start of a stream (nothing produced, nothing billed) is load shedding.
RETRYABLE_EVENT_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error"})
_MAX_ERROR_TEXT = 500
async def exchange(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    *,
    assembler: StreamAssembler,
    errors: ErrorFamily,
    progress: CallProgress,
) -> dict[str, Any]:
    """POST ``body`` and return the provider's response body (assembled when streamed)."""
    payload = json.dumps(body, ensure_ascii=False).encode()
    request_headers = {**headers, "content-type": "application/json", "accept": "text/event-stream"}
    try:
        async with client.stream("POST", url, headers=request_headers, content=payload) as response:
            if not response.is_success:
                await response.aread()
                raise http_error(response, errors)
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                return await _assemble_stream(response, assembler, errors, progress)
            return json_object(await response.aread(), errors, response.status_code)
    except httpx.TransportError as exc:
        # Contract I8: a network failure is a config/DNS/firewall problem, not load: no retry.
        raise errors.api(f"network error calling {url}: {_describe(exc)}") from exc


def http_error(response: httpx.Response, errors: ErrorFamily) -> ApiError:
    status = response.status_code
    error_type, detail = _error_detail(response.content)
    retryable = (status == 429 or status >= 500) and error_type not in NON_RETRYABLE_ERROR_TYPES
    kind = f" {error_type}" if error_type else ""
    return errors.api(
        f"HTTP {status}{kind}: {detail}",
        status=status,
        error_type=error_type,
        retryable=retryable,
        retry_after=parse_retry_after(response.headers.get("retry-after")),
    )


def json_object(raw: bytes, errors: ErrorFamily, status: int) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise errors.api(f"malformed response body: not JSON ({exc})", status=status) from exc
    if not isinstance(value, dict):
        raise errors.api(f"malformed response body: a JSON {type(value).__name__}, not an object", status=status)
    return value


async def _assemble_stream(
    response: httpx.Response,
    assembler: StreamAssembler,
    errors: ErrorFamily,
    progress: CallProgress,
) -> dict[str, Any]:
    status = response.status_code
    try:
        async for event in EventSource(response).aiter_sse():
            label = assembler.feed(event.event, event.data)
            if assembler.started:
                progress.mark_first_token()
            progress.output_chars = assembler.output_chars
            if label is not None:
                await progress.block(label)
        return assembler.result()
    except StreamErrorEvent as exc:
        kind = exc.error_type or "error"
        raise errors.api(
            f"upstream sent an error event mid-stream: {kind}: {exc.message}",
            status=status,
            error_type=exc.error_type,
            retryable=not assembler.started and exc.error_type in RETRYABLE_EVENT_TYPES,
        ) from exc
    except StreamProtocolError as exc:
        # A cut stream is not retried: its tokens were already billed.
        raise errors.api(str(exc), status=status) from exc
    except httpx.TransportError as exc:
        raise errors.api(
            f"stream was cut: the connection failed after {assembler.output_chars} characters "
            f"of output ({_describe(exc)})",
            status=status,
        ) from exc


def _error_detail(raw: bytes) -> tuple[str | None, str]:
    """The provider's error ``type`` and message; both Moonshot and Anthropic nest them in ``error``."""
    text = raw[:_MAX_ERROR_TEXT].decode("utf-8", errors="replace").strip() or "(empty body)"
    try:
        data = json.loads(raw)
    except ValueError:
        return None, text
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        error_type = error.get("type")
        message = error.get("message")
        return (
            error_type if isinstance(error_type, str) else None,
            message if isinstance(message, str) and message else text,
        )
    if isinstance(error, str):
        return None, error
    return None, text


def _describe(exc: Exception) -> str:
    detail = str(exc)
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
