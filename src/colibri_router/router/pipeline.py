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
from colibri_router.engine.rotation import KeyRotation
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
    key: str | None = None  # the fingerprint of the pool key that answered (None: a single key)

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
    # Which key each request goes with: the pool's next in turn, the next one at once when the
    # provider refuses a key (not a retry: engine/rotation.py), else the connection's one key.
    keys = await _key_rotation(connection)

    # Each upstream request is an attempt for metrics and traces; the last one ends with the decoded
    # turn or the call's error (a timeout, a malformed body), whichever comes.
    attempt = observability.attempt(progress.provider, request.model, keys.fingerprint)
    try:
        with within(deadline.remaining()) as scope:
            http = client if client is not None else await shared_client()
            retries = Retries(retry, sleep, deadline)
            while True:
                try:
                    if (unusable := keys.check(dialect.errors)) is not None:
                        raise unusable
                    url, headers = codec.endpoint(connection.base_url, keys.key, request.model)
                    body = await exchange(http, url, headers, encoded.body, codec=codec, progress=progress)
                    keys.answered()
                    break
                except ApiError as error:
                    going_on = keys.failed(error, dialect.errors)
                    attempt.end(error=error)
                    if going_on is None:  # the next key, at once
                        attempt = observability.attempt(progress.provider, request.model, keys.fingerprint)
                        continue
                    await retries.after(going_on)
                    keys.resume()
                    observability.retried(progress.provider, request.model, going_on.kind)
                    attempt = observability.attempt(progress.provider, request.model, keys.fingerprint)
        if scope.cancelled_caught:
            seconds = round(deadline.at - progress.started_at, 1)
            raise dialect.errors.timeout(
                f"{dialect.label} gave no complete answer within the call's deadline of {seconds} s "
                f"(COLIBRI_TIMEOUT_S, or timeout_s in the call)"
            )
        turn = codec.decode(body, request)
    except MalformedResponse as exc:
        malformed = dialect.errors.api(f"malformed response body: {exc}", status=200)
        _scrub(malformed, keys)  # the body may quote a token
        attempt.end(error=malformed)
        raise malformed from exc
    except ColibriError as exc:
        # Also without a key of ours (a local server): an upstream may echo any token it was sent.
        await _failed(exc, keys, attempt)
        raise
    except BaseException:
        attempt.end()  # cancelled
        raise
    attempt.end(turn=turn)
    latency_ms = round((time.monotonic() - progress.started_at) * 1000)
    await keys.shared()
    if clamp_warnings or encoded.warnings or encoded.repairs or keys.warnings:
        turn = replace(
            turn,
            warnings=(*keys.warnings, *clamp_warnings, *encoded.warnings, *turn.warnings),
            repairs=(*encoded.repairs, *turn.repairs),
        )
    _log_success(dialect.label, turn, latency_ms, log)
    return Completion(request=request, turn=turn, latency_ms=latency_ms, ttft_ms=progress.ttft_ms, key=keys.fingerprint)


async def _key_rotation(connection: Connection) -> KeyRotation:
    pool = connection.pool
    if pool is not None and pool.store is not None:
        await pool.store.refresh()  # what the other replicas set aside (at most once a second)
    return KeyRotation(pool, connection.api_key)


async def _failed(error: ColibriError, keys: KeyRotation, attempt: observability.Attempt) -> None:
    _scrub(error, keys)
    attempt.end(error=error)
    await keys.shared()


def _scrub(error: ColibriError, keys: KeyRotation) -> None:
    """Every key the call may have sent taken out of the error, and the key it last used named by its
    fingerprint, with the keys it set aside on the way (the error is all the caller gets)."""
    for secret in keys.secrets() or ("",):
        error.scrub(secret)
    error.key_fingerprint = error.key_fingerprint or keys.fingerprint
    untold = [line for line in keys.warnings if line.split(" ", 2)[1] not in error.message]
    if untold:
        error.message += f" ({'; '.join(untold)})"


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
