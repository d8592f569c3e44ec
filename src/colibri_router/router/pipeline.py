"""The one path every completion takes: encode → exchange (with retries, within the deadline) →
decode → log. A call plugs in a codec (pure: wire + provider + model profile) and a connection
(where its key and URL come from); nothing here names a provider.

The router runs every HTTP provider through :func:`run_completion`; the library functions of
``colibri_router.adapters`` (``create_kimi_completion``...) are a thin facade over it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import anyio
import httpx

from colibri_router import observability
from colibri_router.conversation import AssistantTurn, CompletionRequest, CompletionResult, render_content
from colibri_router.deadlines import within
from colibri_router.engine.clients import shared_client
from colibri_router.engine.transport import exchange
from colibri_router.errors import ApiError, ColibriError, MalformedResponse
from colibri_router.logs import get_logger
from colibri_router.progress import CallProgress
from colibri_router.providers import Connection
from colibri_router.retry import Deadline, Retries, RetryPolicy, Sleep
from colibri_router.wires import Dialect, WireCodec

DEFAULT_MAX_TOKENS = 1024


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
    dialect = codec.dialect
    request, clamp_warnings = _clamp_temperature(request, dialect)
    encoded = codec.encode(request)
    url, headers = codec.endpoint(connection.base_url, connection.api_key, request.model)

    # Each upstream request is an attempt for metrics and traces; the last one ends with the decoded
    # turn or the call's error (a timeout, a malformed body), whichever comes.
    attempt = observability.attempt(progress.provider, request.model)
    try:
        with within(deadline.remaining()) as scope:
            http = client if client is not None else await shared_client()
            retries = Retries(retry, sleep, deadline)
            while True:
                try:
                    body = await exchange(http, url, headers, encoded.body, codec=codec, progress=progress)
                    break
                except ApiError as error:
                    await retries.after(error)
                    attempt.end(error=error)
                    observability.retried(progress.provider, request.model, error.kind)
                    attempt = observability.attempt(progress.provider, request.model)
        if scope.cancelled_caught:
            seconds = round(deadline.at - progress.started_at, 1)
            raise dialect.errors.timeout(
                f"{dialect.label} gave no complete answer within the call's deadline of {seconds} s "
                f"(COLIBRI_TIMEOUT_S, or timeout_s in the call)"
            )
        turn = codec.decode(body, request)
    except MalformedResponse as exc:
        malformed = dialect.errors.api(f"malformed response body: {exc}", status=200)
        malformed.scrub(connection.api_key or "")  # the body may quote a token
        attempt.end(error=malformed)
        raise malformed from exc
    except ColibriError as exc:
        # Also without a key of ours (a local server): an upstream may echo any token it was sent.
        exc.scrub(connection.api_key or "")
        attempt.end(error=exc)
        raise
    except BaseException:
        attempt.end()  # cancelled
        raise
    attempt.end(turn=turn)
    latency_ms = round((time.monotonic() - progress.started_at) * 1000)
    if clamp_warnings or encoded.warnings or encoded.repairs:
        turn = replace(
            turn,
            warnings=(*clamp_warnings, *encoded.warnings, *turn.warnings),
            repairs=(*encoded.repairs, *turn.repairs),
        )
    _log_success(dialect.label, turn, latency_ms, log)
    return Completion(request=request, turn=turn, latency_ms=latency_ms, ttft_ms=progress.ttft_ms)


def _clamp_temperature(request: CompletionRequest, dialect: Dialect) -> tuple[CompletionRequest, tuple[str, ...]]:
    temperature = request.temperature
    if temperature is None:
        return request, ()
    maximum = dialect.max_temperature
    if 0.0 <= temperature <= maximum:
        return request, ()
    clamped = min(max(temperature, 0.0), maximum)
    warning = f"temperature {temperature:g} clamped to {clamped:g} ({dialect.label} accepts 0-{maximum:g})"
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
