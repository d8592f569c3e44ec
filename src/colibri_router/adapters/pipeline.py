"""The one path every completion takes: encode → exchange (with retries, within the deadline) →
decode → log. Providers plug in a :class:`WireCodec` (pure) and a :class:`Provider` entry (where
its key and URL come from); nothing here names a provider.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import anyio
import httpx

from colibri_router.clients import shared_client
from colibri_router.conversation import (
    AnthropicTool,
    AssistantTurn,
    CompletionRequest,
    CompletionResult,
    render_content,
    tool_specs,
    user_prompt,
)
from colibri_router.errors import ColibriError, ErrorFamily, MalformedResponse
from colibri_router.logs import get_logger
from colibri_router.progress import CallProgress
from colibri_router.retry import Deadline, RetryPolicy, Sleep, with_retries
from colibri_router.settings import Settings, load_settings
from colibri_router.toolcalls.assembly import StreamAssembler
from colibri_router.transport import exchange

DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class Encoded:
    body: dict[str, Any]
    warnings: tuple[str, ...] = ()


class WireCodec(Protocol):
    """A provider's wire format and quirks, as pure functions."""

    @property
    def label(self) -> str: ...
    @property
    def errors(self) -> ErrorFamily: ...
    @property
    def max_temperature(self) -> float: ...

    def endpoint(self, base_url: str, api_key: str) -> tuple[str, dict[str, str]]: ...
    def encode(self, request: CompletionRequest) -> Encoded: ...
    def new_assembler(self) -> StreamAssembler: ...
    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn: ...


@dataclass(frozen=True, slots=True)
class Provider:
    """A registry entry: the name hosts use, defaults, and where its settings come from."""

    name: str
    default_model: str
    errors: ErrorFamily
    key_variable: str
    claims_model: Callable[[str], bool]
    connection_settings: Callable[[Settings], tuple[str | None, str]]
    make_codec: Callable[[Settings], WireCodec]

    def connection(self, settings: Settings, api_key: str | None = None, base_url: str | None = None) -> Connection:
        """Key: option, else environment (I3). URL: option, else environment, else default (I4)."""
        env_key, env_url = self.connection_settings(settings)
        key = api_key or env_key
        if not key:
            raise self.errors.config(
                f"no API key for {self.name}: set {self.key_variable} in the environment the MCP host "
                f"passes to colibri-router (or pass api_key)"
            )
        return Connection(api_key=key, base_url=(base_url or env_url).rstrip("/"))


@dataclass(frozen=True, slots=True)
class Connection:
    api_key: str
    base_url: str

    def __repr__(self) -> str:  # never print the key, even in a traceback's locals
        return f"Connection(base_url={self.base_url!r}, api_key=[redacted])"


@dataclass(frozen=True, slots=True)
class Completion:
    request: CompletionRequest
    turn: AssistantTurn
    latency_ms: int
    ttft_ms: int | None

    def contract_result(self) -> CompletionResult:
        return CompletionResult(
            content=render_content(self.turn),
            model=self.turn.model or self.request.model,
            prompt_tokens=self.turn.usage.prompt_tokens,
            completion_tokens=self.turn.usage.completion_tokens,
            latency_ms=self.latency_ms,
            stop_reason=self.turn.stop_reason,
        )


async def run_completion(
    codec: WireCodec,
    request: CompletionRequest,
    connection: Connection,
    *,
    deadline: Deadline,
    progress: CallProgress,
    client: httpx.AsyncClient | None = None,
    sleep: Sleep = anyio.sleep,
    log: Callable[[str], None] | None = None,
    retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, shared safely
) -> Completion:
    request, clamp_warnings = _clamp_temperature(request, codec)
    encoded = codec.encode(request)
    url, headers = codec.endpoint(connection.base_url, connection.api_key)

    async def attempt_with(http: httpx.AsyncClient) -> dict[str, Any]:
        return await exchange(
            http, url, headers, encoded.body, assembler=codec.new_assembler(), errors=codec.errors, progress=progress
        )

    async def attempts(http: httpx.AsyncClient) -> dict[str, Any]:
        return await with_retries(lambda: attempt_with(http), policy=retry, sleep=sleep, deadline=deadline)

    try:
        with anyio.fail_after(max(deadline.remaining(), 0.0)):
            body = await attempts(client if client is not None else await shared_client())
        turn = codec.decode(body, request)
    except TimeoutError as exc:
        seconds = round(deadline.at - progress.started_at, 1)
        raise codec.errors.timeout(
            f"{codec.label} gave no complete answer within the call's deadline of {seconds} s "
            f"(COLIBRI_TIMEOUT_S, or timeout_s in the call)"
        ) from exc
    except MalformedResponse as exc:
        raise codec.errors.api(f"malformed response body: {exc}", status=200) from exc
    except ColibriError as exc:
        exc.scrub(connection.api_key)
        raise
    latency_ms = round((time.monotonic() - progress.started_at) * 1000)
    turn = replace(turn, warnings=(*clamp_warnings, *encoded.warnings, *turn.warnings))
    _log_success(codec.label, turn, latency_ms, log)
    return Completion(request=request, turn=turn, latency_ms=latency_ms, ttft_ms=progress.ttft_ms)


def _clamp_temperature(request: CompletionRequest, codec: WireCodec) -> tuple[CompletionRequest, tuple[str, ...]]:
    temperature = request.temperature
    if temperature is None or 0.0 <= temperature <= codec.max_temperature:
        return request, ()
    clamped = min(max(temperature, 0.0), codec.max_temperature)
    warning = f"temperature {temperature:g} clamped to {clamped:g} ({codec.label} accepts 0-{codec.max_temperature:g})"
    return replace(request, temperature=clamped), (warning,)


def _log_success(label: str, turn: AssistantTurn, latency_ms: int, log: Callable[[str], None] | None) -> None:
    line = (
        f"[{label}] model={turn.model or 'unknown'} prompt_tokens={turn.usage.prompt_tokens} "
        f"completion_tokens={turn.usage.completion_tokens} latency_ms={latency_ms}"
    )
    if log is not None:
        log(line)
    else:
        get_logger().info(line)


@dataclass(frozen=True, kw_only=True, slots=True)
class CompletionOptions:
    """Per-call options of the contract functions; every field optional (contract §1, I14)."""

    model: str | None = None
    max_tokens: int | None = None
    system_prompt: str | None = None
    api_key: str | None = None
    base_url: str | None = None
    http_client: httpx.AsyncClient | None = None
    logger: Callable[[str], None] | None = None
    sleep: Callable[[float], Awaitable[None]] | None = None
    timeout_s: float | None = None


async def complete_prompt(
    provider: Provider,
    prompt: str,
    tools: Sequence[AnthropicTool] | Sequence[Mapping[str, Any]],
    options: CompletionOptions | None,
) -> CompletionResult:
    """The contract functions' shared body: settings are read now (I2), never at import."""
    options = options or CompletionOptions()
    settings = load_settings()
    connection = provider.connection(settings, options.api_key, options.base_url)
    request = CompletionRequest(
        model=options.model or provider.default_model,
        messages=user_prompt(prompt),
        max_tokens=options.max_tokens if options.max_tokens is not None else DEFAULT_MAX_TOKENS,
        system=options.system_prompt,
        tools=tool_specs(tools),
    )
    completion = await run_completion(
        provider.make_codec(settings),
        request,
        connection,
        deadline=Deadline.after(options.timeout_s or settings.timeout_s),
        progress=CallProgress(provider.name),
        client=options.http_client,
        sleep=options.sleep or anyio.sleep,
        log=options.logger,
    )
    return completion.contract_result()
