"""Retry policy (I7), network failures (I8), malformed answers, deadlines, the error classes and key
redaction: one policy for both adapters, so every test runs for Kimi and for Claude.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import anyio
import httpx
import pytest
from _wire import (
    FLAVORS,
    KIMI,
    Flavor,
    Reply,
    Upstream,
    json_reply,
    raising,
    raw_reply,
    sse_reply,
)

from colibri_router.adapters import AnthropicApiError, AnthropicTimeoutError, KimiApiError, KimiTimeoutError
from colibri_router.errors import ApiError, ColibriError
from colibri_router.retry import RetryPolicy, parse_retry_after


@pytest.fixture(params=FLAVORS, ids=[f.name for f in FLAVORS])
def flavor(request: pytest.FixtureRequest) -> Flavor:
    chosen: Flavor = request.param
    return chosen


async def fails(flavor: Flavor, upstream: Upstream, **overrides: object) -> ApiError:
    """Run a plain completion that must fail with the flavor's API error; return the error."""
    with pytest.raises(flavor.api_error) as caught:
        await flavor.complete("hi", flavor.opts(upstream, **overrides))
    return caught.value


def errors(flavor: Flavor, statuses: Sequence[int]) -> list[Reply]:
    return [flavor.error(status) for status in statuses]


# --- I7: retries -------------------------------------------------------------------------------------------


async def test_i7_retry_schedule_is_100_200_400_ms_then_retries_exhausted(flavor: Flavor) -> None:
    upstream = Upstream.of(*errors(flavor, [500, 502, 503, 429]))

    error = await fails(flavor, upstream)

    assert len(upstream.requests) == 4
    assert upstream.sleeps == [0.1, 0.2, 0.4]
    assert error.code == f"{flavor.code_prefix}_RETRIES_EXHAUSTED"
    assert error.status == 429  # the last attempt's status
    assert len({r.content for r in upstream.requests}) == 1  # every attempt sends the same request
    assert upstream.logs == []


async def test_i7_a_retry_that_succeeds_returns_the_answer(flavor: Flavor) -> None:
    upstream = Upstream.of(flavor.error(429), flavor.error(503), flavor.ok("recovered"))

    result = await flavor.complete("hi", flavor.opts(upstream))

    assert result.content == "recovered"
    assert upstream.sleeps == [0.1, 0.2]
    assert len(upstream.logs) == 1


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 529])
async def test_i7_429_and_5xx_are_retried(flavor: Flavor, status: int) -> None:
    upstream = Upstream.of(flavor.error(status), flavor.ok())

    await flavor.complete("hi", flavor.opts(upstream))

    assert len(upstream.requests) == 2
    assert upstream.sleeps == [0.1]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
async def test_i7_other_statuses_are_terminal(flavor: Flavor, status: int) -> None:
    upstream = Upstream.of(flavor.error(status, "nope"))

    error = await fails(flavor, upstream)

    assert error.code == f"{flavor.code_prefix}_API_ERROR"
    assert error.status == status
    assert "nope" in str(error)
    assert len(upstream.requests) == 1
    assert upstream.sleeps == []


@pytest.mark.parametrize(
    ("retry_after", "first_sleep"),
    [("2", 2.0), ("100", 30.0), ("0.05", 0.1), ("0", 0.1), ("soon", 0.1)],
    ids=["asked-for", "capped-at-30", "below-backoff", "zero", "unreadable"],
)
async def test_i7_retry_after_lengthens_the_backoff(flavor: Flavor, retry_after: str, first_sleep: float) -> None:
    upstream = Upstream.of(flavor.error(429, headers={"Retry-After": retry_after}), flavor.ok())

    await flavor.complete("hi", flavor.opts(upstream))

    assert upstream.sleeps == [first_sleep]


async def test_i7_retry_after_applies_to_each_retry_on_its_own(flavor: Flavor) -> None:
    upstream = Upstream.of(
        flavor.error(503, headers={"Retry-After": "1"}), flavor.error(503), flavor.error(503), flavor.error(503)
    )

    await fails(flavor, upstream)

    assert upstream.sleeps == [1.0, 0.2, 0.4]


async def test_i7_kimi_out_of_quota_429_is_not_retried() -> None:
    upstream = Upstream.of(KIMI.error(429, "your balance is exhausted", "exceeded_current_quota_error"))

    error = await fails(KIMI, upstream)

    assert error.code == "KIMI_API_ERROR"
    assert error.status == 429
    assert len(upstream.requests) == 1
    assert upstream.sleeps == []


def test_i7_retry_after_as_an_http_date() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=7), usegmt=True)

    assert parse_retry_after(later, now=now.timestamp) == pytest.approx(7.0)
    assert parse_retry_after(format_datetime(now - timedelta(seconds=5), usegmt=True), now=now.timestamp) == 0.0
    assert RetryPolicy().delay_before_retry(3, None) == pytest.approx(0.4)


# --- I8: network failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError("connection refused"), httpx.ConnectTimeout("timed out"), httpx.ReadError("reset")],
    ids=["connect-error", "connect-timeout", "read-error"],
)
async def test_i8_network_errors_are_wrapped_and_not_retried(flavor: Flavor, failure: Exception) -> None:
    upstream = Upstream.of(raising(failure), flavor.ok())

    error = await fails(flavor, upstream)

    assert error.code == f"{flavor.code_prefix}_API_ERROR"
    assert error.status is None
    assert len(upstream.requests) == 1
    assert upstream.sleeps == []
    assert "network error" in str(error)
    assert isinstance(error.__cause__, httpx.TransportError)


# --- malformed 200s --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        raw_reply(200, "<html>Bad gateway</html>", "text/html"),
        raw_reply(200, "{not json"),
        json_reply([1, 2, 3]),
        json_reply({"id": "x", "object": "unexpected"}),
        sse_reply("data: not json at all\n\n"),
    ],
    ids=["html", "broken-json", "json-array", "wrong-shape", "sse-garbage"],
)
async def test_malformed_200_is_an_api_error_with_status_200_and_no_retry(flavor: Flavor, reply: Reply) -> None:
    upstream = Upstream.of(reply, flavor.ok())

    error = await fails(flavor, upstream)

    assert error.code == f"{flavor.code_prefix}_API_ERROR"
    assert error.status == 200
    assert len(upstream.requests) == 1
    assert upstream.sleeps == []


async def test_a_stream_cut_before_its_end_is_not_retried(flavor: Flavor) -> None:
    whole = flavor.sse(flavor.text_body("a long answer that will be cut"))
    cut = "\n\n".join(whole.split("\n\n")[:3]) + "\n\n"  # no [DONE] / message_stop
    upstream = Upstream.of(sse_reply(cut), flavor.ok())

    error = await fails(flavor, upstream)

    assert error.code == f"{flavor.code_prefix}_API_ERROR"
    assert error.status == 200
    assert "cut" in str(error)
    assert len(upstream.requests) == 1


# --- the call's deadline ------------------------------------------------------------------------------------


async def test_a_slow_upstream_hits_the_call_deadline(flavor: Flavor) -> None:
    async def never_answers(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(30)
        raise AssertionError("the deadline should have cancelled this")

    client = httpx.AsyncClient(transport=httpx.MockTransport(never_answers))
    timeout_error = KimiTimeoutError if flavor is KIMI else AnthropicTimeoutError

    with anyio.fail_after(10), pytest.raises(timeout_error) as caught:
        await flavor.complete("hi", flavor.opts(Upstream(), http_client=client, timeout_s=0.05))

    assert caught.value.code == f"{flavor.code_prefix}_TIMEOUT"


async def test_a_retry_that_cannot_start_before_the_deadline_is_not_attempted(flavor: Flavor) -> None:
    upstream = Upstream.of(flavor.error(429, headers={"Retry-After": "20"}), flavor.ok())

    error = await fails(flavor, upstream, timeout_s=5)

    assert error.code == f"{flavor.code_prefix}_API_ERROR"
    assert error.status == 429
    assert len(upstream.requests) == 1
    assert upstream.sleeps == []


# --- the error classes ----------------------------------------------------------------------------------------


def test_error_classes_share_one_shape(flavor: Flavor) -> None:
    api_error = flavor.api_error("boom", status=502)
    exhausted = api_error.exhausted(4)
    config_error = flavor.config_error("no key")

    assert isinstance(api_error, ColibriError)
    assert isinstance(api_error, Exception)
    assert flavor.api_error.__name__ == ("KimiApiError" if flavor is KIMI else "AnthropicApiError")
    assert (api_error.code, api_error.status, str(api_error)) == (f"{flavor.code_prefix}_API_ERROR", 502, "boom")
    assert (exhausted.code, exhausted.status) == (f"{flavor.code_prefix}_RETRIES_EXHAUSTED", 502)
    assert type(exhausted) is flavor.api_error
    assert config_error.code == f"{flavor.code_prefix}_CONFIG_ERROR"
    assert config_error.status is None
    assert issubclass(flavor.api_error, KimiApiError if flavor is KIMI else AnthropicApiError)


# --- keys never leak -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("statuses", [[401], [500, 500, 500, 500]], ids=["terminal-401", "retries-exhausted"])
async def test_key_echoed_by_the_upstream_is_redacted_from_the_error_message(
    flavor: Flavor, statuses: list[int]
) -> None:
    echo = f"Incorrect API key provided: {flavor.key}"
    upstream = Upstream.of(*[flavor.error(status, echo, "authentication_error") for status in statuses])

    error = await fails(flavor, upstream)

    assert flavor.key not in str(error)
    assert flavor.key not in error.message
    assert "Incorrect API key provided" in str(error)  # the rest of the upstream's message is kept
    assert upstream.logs == []


ECHOING_FAILURES = pytest.mark.parametrize(
    "statuses", [[401], [500, 500, 500, 500]], ids=["terminal-401", "retries-exhausted"]
)


async def key_echoing_error(flavor: Flavor, statuses: list[int]) -> ApiError:
    echo = f"Incorrect API key provided: {flavor.key}"
    return await fails(flavor, Upstream.of(*[flavor.error(s, echo, "authentication_error") for s in statuses]))


@ECHOING_FAILURES
async def test_key_echoed_by_the_upstream_is_absent_from_the_error_repr(flavor: Flavor, statuses: list[int]) -> None:
    error = await key_echoing_error(flavor, statuses)

    # repr shows `args`, not `message`: both must be scrubbed.
    assert flavor.key not in repr(error)


@ECHOING_FAILURES
async def test_key_echoed_by_the_upstream_is_absent_from_the_printed_traceback(
    flavor: Flavor, statuses: list[int]
) -> None:
    error = await key_echoing_error(flavor, statuses)

    # After retries `__cause__` is the last attempt's error; a printed traceback shows the whole chain.
    assert flavor.key not in "".join(traceback.format_exception(error))


async def test_key_from_the_environment_is_redacted_too(flavor: Flavor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(flavor.key_variable, flavor.key)
    upstream = Upstream.of(flavor.error(403, f"key {flavor.key} lacks access"))

    error = await fails(flavor, upstream, api_key=None)

    assert flavor.key not in str(error)


async def test_key_is_absent_from_the_result_and_the_log_line(flavor: Flavor) -> None:
    upstream = Upstream.of(flavor.ok())

    result = await flavor.complete("hi", flavor.opts(upstream))

    assert flavor.key not in result.model_dump_json()
    assert all(flavor.key not in line for line in upstream.logs)
