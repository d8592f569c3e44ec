"""The one accounting module every service uses around the router: limits from the settings, the
store-off refusals, one reservation per call, rows written with the last settling it, a store that
fails after the answer becoming a warning, and each row's outcome."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from colibri_router.accounting import STORE_OFF_BUDGET, STORE_OFF_THREAD, Ledger
from colibri_router.errors import ColibriError, ConfigError, DeadlineError
from colibri_router.schema import RouterCallInput, RouterCallResult
from colibri_router.settings import load_settings
from colibri_router.store import LedgerRow, Store, StoreError, usd_to_micro

ASKED = RouterCallInput.model_validate({"prompt": "hi", "model": "claude-sonnet-4-5"})


def row(cost_usd: float, principal: str = "alice") -> LedgerRow:
    return LedgerRow(
        at=datetime.now(UTC),
        principal=principal,
        thread_id=None,
        provider="claude",
        model="claude-sonnet-4-5",
        cost_micro_usd=usd_to_micro(cost_usd),
    )


def answered(cost_usd: float | None) -> RouterCallResult:
    return RouterCallResult(
        provider="claude",
        content="ok",
        model="claude-sonnet-4-5-20250929",
        prompt_tokens=12,
        completion_tokens=3,
        cached_tokens=2,
        cache_write_tokens=1,
        reasoning_tokens=0,
        cost_usd=cost_usd,
        price_source="bundled",
        latency_ms=41,
        ttft_ms=None,
        stop_reason="end_turn",
        tool_calls=[],
        thinking=None,
        warnings=[],
        message=None,
        attempts=[],
    )


async def spent() -> tuple[int, int | None]:
    ledger = Ledger.open(load_settings(), "alice")
    assert ledger.store is not None
    report = await ledger.store.usage_report(None, "all", None)
    return report.total.calls, report.total.cost_micro_usd


def test_with_the_store_off_a_thread_or_a_budget_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_STORE", "off")
    with pytest.raises(ConfigError) as raised:
        Ledger.open(load_settings(), "alice", thread=True)
    assert raised.value.message == STORE_OFF_THREAD == "thread_id needs the store, and COLIBRI_STORE is off"
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", "5")
    with pytest.raises(ConfigError) as raised:
        Ledger.open(load_settings(), "alice")
    assert raised.value.message == STORE_OFF_BUDGET
    assert "COLIBRI_BUDGET_* need the store" in STORE_OFF_BUDGET


async def test_with_the_store_off_and_no_budget_nothing_is_held_or_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_STORE", "off")
    ledger = Ledger.open(load_settings(), "alice", announce=True)
    assert (ledger.store, ledger.expected_row, ledger.budgeted) == (None, None, False)
    await ledger.reserve(100.0)
    await ledger.write([row(0.01)], "the ledger row")
    assert (ledger.reservation, ledger.warnings) == (None, [])


async def test_the_limits_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", "1.5")
    monkeypatch.setenv("COLIBRI_BUDGET_MONTHLY_USD", "20")
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD_PER_USER", "0.25")
    ledger = Ledger.open(load_settings(), "alice")
    assert ledger.budgeted
    assert (
        ledger.limits.daily_micro_usd,
        ledger.limits.monthly_micro_usd,
        ledger.limits.daily_per_principal_micro_usd,
    ) == (1_500_000, 20_000_000, 250_000)


async def test_without_a_budget_no_reservation_is_made() -> None:
    ledger = Ledger.open(load_settings(), "alice")
    assert ledger.store is not None and not ledger.budgeted
    await ledger.reserve(1_000.0)
    assert ledger.reservation is None


async def test_one_reservation_per_call_held_until_the_last_row_settles_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The admission rule: a call is admitted while the committed spend (ledger plus held reservations)
    # is below the limit.
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", "1")
    first = Ledger.open(load_settings(), "alice")
    await first.reserve(0.6)
    held = first.reservation
    assert held is not None
    await first.reserve(0.6)  # a second attempt of the same call (a fallback) reserves nothing more
    assert first.reservation is held
    second = Ledger.open(load_settings(), "bob")
    await second.reserve(0.5)  # 0.6 held, not 1.2: admitted
    # 1.1 is now held: nothing more is admitted while both are in flight.
    with pytest.raises(ColibriError) as refused:
        await Ledger.open(load_settings(), "carol").reserve(0.01)
    assert refused.value.code == "BUDGET_EXCEEDED"

    await first.write([row(0.01), row(0.02)], "the ledger rows")

    assert await spent() == (2, 30_000)
    # The last row settled the first reservation (0.6 dropped for the real 0.03): 0.53 is committed.
    third = Ledger.open(load_settings(), "carol")
    await third.reserve(0.01)
    assert third.reservation is not None and first.warnings == []


class _FailingStore:
    """A store whose every write fails, as a full disk would."""

    def __init__(self) -> None:
        self.tried: list[str] = []

    async def record_call(self, row: LedgerRow) -> None:
        self.tried.append("record_call")
        raise StoreError("/data/colibri.db", OSError("No space left on device"))

    async def settle(self, reservation: Any, row: LedgerRow) -> None:
        self.tried.append("settle")
        raise StoreError("/data/colibri.db", OSError("No space left on device"))


async def test_a_store_that_fails_after_the_answer_is_a_warning_never_an_error() -> None:
    failing = _FailingStore()
    ledger = Ledger(load_settings(), cast(Store, failing), "alice", Ledger.open(load_settings(), "x").limits)
    await ledger.write([row(0.01), row(0.02)], "the ledger rows")
    assert failing.tried == ["record_call"]  # the first failure stops the rest
    assert ledger.warnings == ["the ledger rows could not be written to the local SQLite file; see the server log"]
    ledger.store_failed(
        "the thread", StoreError("db.example:5432", ConnectionRefusedError("refused"), backend="postgresql")
    )
    assert ledger.warnings[-1] == "the thread could not be written to the PostgreSQL database; see the server log"
    assert not any("/data/colibri.db" in warning or "No space" in warning for warning in ledger.warnings)


def test_a_row_says_what_became_of_the_call() -> None:
    ledger = Ledger.open(load_settings(), "alice")
    started = datetime.now(UTC) - timedelta(milliseconds=250)

    ok = ledger.row(ASKED, answered(0.0125), None, started=started, thread_id="t-1")
    assert (ok.outcome, ok.kind, ok.provider, ok.model, ok.thread_id) == (
        "ok",
        None,
        "claude",
        "claude-sonnet-4-5-20250929",
        "t-1",
    )
    assert (ok.input_tokens, ok.output_tokens, ok.cached_tokens, ok.cache_write_tokens) == (12, 3, 2, 1)
    assert (ok.cost_micro_usd, ok.latency_ms, ok.principal) == (12_500, 41, "alice")
    assert ledger.row(ASKED, answered(None), None, started=started).cost_micro_usd is None  # no price

    timed_out = DeadlineError("the call's deadline passed").about("claude", "claude-sonnet-4-5")
    failed = ledger.row(ASKED, None, timed_out, started=started)
    assert (failed.outcome, failed.kind, failed.cost_micro_usd) == (timed_out.code, "TIMEOUT", 0)
    assert failed.latency_ms >= 250  # from when the call began, not from when the row was made

    cancelled = ledger.row(ASKED, None, None, started=started)
    assert (cancelled.outcome, cancelled.kind) == ("CANCELLED", None)
    assert (cancelled.provider, cancelled.model) == ("", "claude-sonnet-4-5")  # what was asked


def test_a_row_keeps_the_attempts_and_counts_the_warnings_without_their_text() -> None:
    from colibri_router.schema import Attempt
    from colibri_router.store import LedgerAttempt

    ledger = Ledger.open(load_settings(), "alice")
    started = datetime.now(UTC)
    tried = [
        Attempt(provider="kimi", model="kimi-k2", outcome="KIMI_RATE_LIMITED", kind="RATE_LIMITED", latency_ms=12),
        Attempt(provider="claude", model="claude-sonnet-4-5", outcome="ok", kind=None, latency_ms=41),
    ]
    result = answered(0.01).model_copy(update={"attempts": tried, "warnings": ["files: secret.txt left out", "x"]})
    ok = ledger.row(ASKED, result, None, started=started)
    assert ok.attempts == (
        LedgerAttempt("kimi", "kimi-k2", "KIMI_RATE_LIMITED", "RATE_LIMITED", 12),
        LedgerAttempt("claude", "claude-sonnet-4-5", "ok", None, 41),
    )
    assert ok.warning_count == 2
    assert "secret.txt" not in repr(ok)
    failed_error = DeadlineError("the call's deadline passed").about("claude", "claude-sonnet-4-5")
    failed_error.attempts = tuple(attempt.model_dump() for attempt in tried[:1])
    failed = ledger.row(ASKED, None, failed_error, started=started)
    assert failed.attempts == ok.attempts[:1]
    assert ledger.row(ASKED, None, None, started=started).attempts == ()
