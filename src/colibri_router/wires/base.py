"""The codec interface every wire implements, and what a codec for one call is made of.

A codec is pure: our conversation types in, the wire's request JSON out; the wire's response body
(or the body its stream assembler rebuilt) in, an :class:`AssistantTurn` out; an error response in,
an :class:`UpstreamError` out. One codec = one wire module shaped by a :class:`Dialect` (the provider entry
and the model's profile); the transport does all I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from colibri_router.conversation import AssistantTurn, CompletionRequest
from colibri_router.errors import ErrorFamily, InvalidRequestError, Kind, error_family
from colibri_router.providers.profiles import ModelProfile
from colibri_router.providers.spec import ProviderSpec
from colibri_router.retry import parse_retry_after
from colibri_router.toolcalls.assembly import StreamAssembler
from colibri_router.toolcalls.ids import KimiIdMode

MAX_ERROR_TEXT = 500


@dataclass(frozen=True, slots=True)
class Dialect:
    """What one call's codec is made of: where it goes (the provider entry) and what it talks to (the
    model's profile), plus the user's Kimi ID mode."""

    provider: ProviderSpec
    profile: ModelProfile
    kimi_id_mode: KimiIdMode = "renumber"
    prompt_cache: bool = True  # mark cache breakpoints where the wire has them (COLIBRI_PROMPT_CACHE)

    @property
    def label(self) -> str:
        return self.provider.name

    @property
    def errors(self) -> ErrorFamily:
        return error_family(self.provider.error_prefix)

    def headers(
        self, api_key: str | None, key_header: str = "authorization", key_format: str = "Bearer {}"
    ) -> dict[str, str]:
        """The provider's extra headers plus the key, when there is one, in the wire's own header."""
        headers = dict(self.provider.headers)
        if api_key:
            headers[key_header] = key_format.format(api_key)
        return headers

    def check_tool_count(self, request: CompletionRequest) -> None:
        """The model profile's tool limit (Kimi: 128), on every wire that serves such a model."""
        limit = self.profile.max_tools
        if limit is not None and len(request.tools) > limit:
            raise InvalidRequestError(
                f"{request.model} accepts at most {limit} tools; the call gave {len(request.tools)}"
            )

    @property
    def max_temperature(self) -> float:
        host = self.provider.quirks.max_temperature
        model = self.profile.max_temperature
        return host if model is None else min(host, model)


@dataclass(frozen=True, slots=True)
class Encoded:
    body: dict[str, Any]
    warnings: tuple[str, ...] = ()
    repairs: tuple[str, ...] = ()  # e.g. "tool_choice_nudged": see AssistantTurn.repairs


@dataclass(frozen=True, slots=True)
class UpstreamError:
    """What an upstream said about a failure. ``retryable`` None leaves it to the status (429 and 5xx
    are retried); a wire sets it when the body says otherwise (quota exhausted, a bad key)."""

    message: str
    error_type: str | None = None
    retryable: bool | None = None
    retry_after_s: float | None = None
    kind: Kind | None = None  # None: engine/classify.py decides from status, labels and the provider's phrases
    labels: tuple[str, ...] = ()  # further structured labels (an error code beside the type, a reason)


class WireCodec(Protocol):
    @property
    def dialect(self) -> Dialect: ...

    def endpoint(self, base_url: str, api_key: str | None, model: str) -> tuple[str, dict[str, str]]:
        """The URL to POST and the headers (auth and the provider's extra headers)."""
        ...

    def encode(self, request: CompletionRequest) -> Encoded: ...

    def new_assembler(self) -> StreamAssembler: ...

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn: ...

    def read_error(self, status: int, headers: Mapping[str, str], body: bytes) -> UpstreamError: ...

    def model_list_endpoint(self, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
        """The URL to GET for the provider's model list, and its headers."""
        ...

    def decode_model_list(self, body: Mapping[str, Any]) -> list[str]: ...


def error_text(raw: bytes) -> str:
    """The start of an error body as text, for messages when it holds nothing structured."""
    return raw[:MAX_ERROR_TEXT].decode("utf-8", errors="replace").strip() or "(empty body)"


def json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """``retry-after-ms`` (OpenAI) in seconds, else ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def nested_error(raw: bytes, headers: Mapping[str, str]) -> UpstreamError:
    """The common ``{"error": {"type"|"code", "message"}}`` body (OpenAI, Moonshot, Anthropic and most
    OpenAI-compatible hosts), a bare ``{"error": "text"}`` or a flat ``{"message": ...}``."""
    data = json_or_none(raw)
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code")
        message = error.get("message")
        return UpstreamError(
            message=message if isinstance(message, str) and message else error_text(raw),
            error_type=str(kind) if isinstance(kind, str | int) and kind != "" else None,
            retry_after_s=retry_after(headers),
        )
    if isinstance(error, str) and error:
        return UpstreamError(message=error, retry_after_s=retry_after(headers))
    message = data.get("message") if isinstance(data, dict) else None
    if isinstance(message, str) and message:
        kind = data.get("type") or data.get("code")
        return UpstreamError(
            message=message,
            error_type=str(kind) if isinstance(kind, str | int) and kind != "" else None,
            retry_after_s=retry_after(headers),
        )
    return UpstreamError(message=error_text(raw), retry_after_s=retry_after(headers))


def listed_names(body: Mapping[str, Any], key: str, field: str, prefix: str = "") -> list[str]:
    """``body[key][*][field]`` as model names (``prefix`` removed), skipping anything malformed."""
    entries = body.get(key)
    names = []
    for entry in entries if isinstance(entries, list) else ():
        name = entry.get(field) if isinstance(entry, dict) else None
        if isinstance(name, str) and name:
            names.append(name.removeprefix(prefix))
    return names
