"""The ledger: rows in, exact micro-dollar sums out, grouped and windowed by UTC calendar days."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_support import START, AnyStore, DatabasePeek, FakeClock, ledger_row, open_test_store

from colibri_router.store import LedgerRow, UsageTotals

_rows = st.lists(
    st.builds(
        ledger_row,
        at=st.just(START),
        principal=st.sampled_from(["alice", "bob"]),
        provider=st.sampled_from(["kimi", "claude", "openai"]),
        input_tokens=st.integers(0, 10**7),
        output_tokens=st.integers(0, 10**6),
        cached_tokens=st.integers(0, 10**6),
        cost_micro_usd=st.none() | st.integers(0, 10**9),
        outcome=st.sampled_from(["ok", "ok", "KIMI_API_ERROR", "BUDGET_EXCEEDED"]),
    ),
    max_size=30,
)


def _expected(rows: list[LedgerRow]) -> UsageTotals:
    return UsageTotals(
        key=None,
        calls=len(rows),
        errors=sum(row.outcome != "ok" for row in rows),
        input_tokens=sum(row.input_tokens for row in rows),
        output_tokens=sum(row.output_tokens for row in rows),
        cached_tokens=sum(row.cached_tokens for row in rows),
        cost_micro_usd=sum(row.cost_micro_usd or 0 for row in rows),
        unpriced_calls=sum(row.cost_micro_usd is None for row in rows),
    )


# Every example runs on the test's one database (emptying its ledger first), in an event loop of its own.
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(rows=_rows)
def test_totals_are_the_exact_sums_of_the_rows(database: Path | str, peek: DatabasePeek, rows: list[LedgerRow]) -> None:
    async def check() -> None:
        store = open_test_store(database, thread_ttl_days=30, clock=FakeClock())
        await store.usage_report(None)  # a new database gets its schema
        await peek.execute("DELETE FROM ledger")
        for row in rows:
            await store.record_call(row)
        assert (await store.usage_report(None)).total == _expected(rows)
        for principal in ("alice", "bob"):
            own = [row for row in rows if row.principal == principal]
            assert (await store.usage_report(principal)).total == _expected(own)
        by_provider = await store.usage_report(None, by="provider")
        for group in by_provider.groups:
            assert group == replace(_expected([row for row in rows if row.provider == group.key]), key=group.key)
        assert sum(group.cost_micro_usd for group in by_provider.groups) == _expected(rows).cost_micro_usd
        await store.aclose()

    anyio.run(check)


async def test_an_empty_ledger_reports_zeros(store: AnyStore) -> None:
    report = await store.usage_report("alice", "7d", "model")
    assert report.groups == ()
    assert report.total == UsageTotals(None, 0, 0, 0, 0, 0, 0, 0)


async def test_groups_by_provider_and_model_come_by_cost_then_name(store: AnyStore) -> None:
    for provider, model, cost in [
        ("kimi", "kimi-k2", 300),
        ("claude", "claude-sonnet-4-5", 500),
        ("kimi", "kimi-k2-thinking", 200),
        ("openai", "gpt-5", 600),
    ]:
        await store.record_call(ledger_row(START, provider=provider, model=model, cost_micro_usd=cost))

    by_provider = await store.usage_report(None, by="provider")
    assert [(g.key, g.cost_micro_usd, g.calls) for g in by_provider.groups] == [
        ("openai", 600, 1),
        ("claude", 500, 1),  # a tie in cost goes by name
        ("kimi", 500, 2),
    ]
    by_model = await store.usage_report(None, by="model")
    assert [g.key for g in by_model.groups] == ["gpt-5", "claude-sonnet-4-5", "kimi-k2", "kimi-k2-thinking"]
    assert by_model.total.cost_micro_usd == 1_600
    assert by_model.total.cost_usd == 0.0016


async def test_since_windows_and_days_follow_the_utc_calendar(store: AnyStore, clock: FakeClock) -> None:
    now = datetime(2025, 3, 14, 0, 30, tzinfo=UTC)
    clock.now = now
    moments = {
        "just now": now,
        "just after midnight": datetime(2025, 3, 14, 0, 0, tzinfo=UTC),
        "just before midnight": datetime(2025, 3, 13, 23, 59, 59, 999000, tzinfo=UTC),
        "in a zone east of UTC, still yesterday in UTC": datetime(
            2025, 3, 14, 1, 0, tzinfo=timezone(timedelta(hours=2))
        ),
        "six days back": datetime(2025, 3, 8, 0, 0, tzinfo=UTC),
        "seven days back": datetime(2025, 3, 7, 23, 0, tzinfo=UTC),
        "twenty-nine days back": datetime(2025, 2, 13, 0, 0, tzinfo=UTC),
        "thirty days back": datetime(2025, 2, 12, 23, 59, tzinfo=UTC),
    }
    for cost, moment in enumerate(moments.values()):
        await store.record_call(ledger_row(moment, cost_micro_usd=10**cost))

    totals = {
        since: (await store.usage_report("alice", since)).total.cost_micro_usd
        for since in ("today", "7d", "30d", "all")
    }
    assert totals == {"today": 11, "7d": 11_111, "30d": 1_111_111, "all": 11_111_111}

    by_day = await store.usage_report("alice", "7d", by="day")
    assert by_day.starts_at == datetime(2025, 3, 8, tzinfo=UTC)
    assert [(g.key, g.cost_micro_usd) for g in by_day.groups] == [
        ("2025-03-08", 10_000),
        ("2025-03-13", 1_100),
        ("2025-03-14", 11),
    ]


async def test_usage_is_per_principal_unless_asked_for_everyone(store: AnyStore) -> None:
    await store.record_call(ledger_row(START, principal="alice", cost_micro_usd=1))
    await store.record_call(
        ledger_row(START, principal="bob", cost_micro_usd=10, outcome="KIMI_API_ERROR", kind="SERVER_ERROR")
    )
    assert (await store.usage_report("alice")).total.cost_micro_usd == 1
    bob = (await store.usage_report("bob")).total
    assert (bob.cost_micro_usd, bob.errors) == (10, 1)
    assert (await store.usage_report(None)).total.calls == 2


def test_a_ledger_row_is_kept_in_utc_and_refuses_nonsense() -> None:
    local = datetime(2025, 3, 14, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    assert ledger_row(local).at == datetime(2025, 3, 14, 12, 0, tzinfo=UTC)
    assert ledger_row(START, outcome="ANTHROPIC_API_ERROR").is_error
    with pytest.raises(ValueError, match="timezone-aware"):
        ledger_row(datetime(2025, 3, 14, 12, 0))
    with pytest.raises(ValueError, match="output_tokens"):
        ledger_row(START, output_tokens=-1)
    with pytest.raises(ValueError, match="outcome"):
        ledger_row(START, outcome="")
