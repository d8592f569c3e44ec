"""Reading the ledger back for the team server's pages: one call by id, recent calls under every
filter, spend per UTC day per member and per model; the same answers from both backends."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_support import START, AnyStore, ledger_row

from colibri_router.store import CallQuery, DaySpend, LedgerAttempt, LedgerRow

ROWS = [
    ledger_row(START - timedelta(days=2), principal="alice", model="kimi-k2", cost_micro_usd=1_000),
    ledger_row(START - timedelta(days=1), principal="bob", model="gpt-5", cost_micro_usd=2_500, reasoning_tokens=7),
    ledger_row(START - timedelta(days=1, hours=1), principal="alice", model="gpt-5", cost_micro_usd=None),
    ledger_row(START, principal="alice", model="kimi-k2", outcome="KIMI_API_ERROR", kind="PROVIDER_ERROR"),
    ledger_row(
        START,
        principal="bob",
        model="kimi-k2",
        outcome="TIMEOUT",
        kind="TIMEOUT",
        cost_micro_usd=0,
        attempts=(
            LedgerAttempt("kimi", "kimi-k2", "KIMI_RATE_LIMITED", "RATE_LIMITED", 15),
            LedgerAttempt("kimi", "kimi-k2", "TIMEOUT", "TIMEOUT", 30_000),
        ),
        warning_count=2,
    ),
]

_examples = itertools.count()


async def _filled(store: AnyStore) -> list[LedgerRow]:
    for row in ROWS:
        await store.record_call(row)
    return ROWS


async def test_calls_come_back_whole_newest_first_with_growing_ids(store: AnyStore) -> None:
    await _filled(store)
    listed = await store.list_calls(CallQuery())
    assert [call.row for call in listed] == ROWS[::-1]
    assert [call.call_id for call in listed] == sorted((call.call_id for call in listed), reverse=True)
    one = await store.get_call(listed[3].call_id, None)
    assert one is not None and one.row == ROWS[1] and one.row.reasoning_tokens == 7
    newest = await store.get_call(listed[0].call_id, None)
    assert newest is not None and newest.row.attempts == ROWS[4].attempts and newest.row.warning_count == 2


async def test_a_call_is_hidden_from_another_principal(store: AnyStore) -> None:
    await _filled(store)
    bobs = (await store.list_calls(CallQuery(principal="bob")))[0]
    assert await store.get_call(bobs.call_id, "alice") is None
    assert await store.get_call(bobs.call_id, "bob") == bobs
    assert await store.get_call(10**9, None) is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (CallQuery(principal="alice"), [3, 2, 0]),
        (CallQuery(model="gpt-5"), [2, 1]),
        (CallQuery(outcome="ok"), [2, 1, 0]),
        (CallQuery(outcome="error"), [4, 3]),
        (CallQuery(outcome="TIMEOUT"), [4]),
        (CallQuery(since=START - timedelta(days=1, hours=1)), [4, 3, 2, 1]),
        (CallQuery(until=START - timedelta(days=1)), [2, 0]),
        (CallQuery(principal="alice", model="kimi-k2", outcome="ok"), [0]),
        (CallQuery(limit=2), [4, 3]),
    ],
)
async def test_each_filter_keeps_exactly_its_calls(store: AnyStore, query: CallQuery, expected: list[int]) -> None:
    await _filled(store)
    assert [call.row for call in await store.list_calls(query)] == [ROWS[index] for index in expected]


async def test_pages_go_back_by_id(store: AnyStore) -> None:
    await _filled(store)
    first = await store.list_calls(CallQuery(limit=2))
    second = await store.list_calls(CallQuery(limit=2, before_id=first[-1].call_id))
    assert [call.row for call in first + second] == ROWS[::-1][:4]


async def test_spend_per_day_by_member_and_by_model(store: AnyStore) -> None:
    await _filled(store)
    since = START - timedelta(days=1, hours=12)
    yesterday, today = "2025-03-13", "2025-03-14"
    assert await store.spend_by_day(None, since, "principal") == [
        DaySpend(yesterday, "alice", 1, 0, 0),
        DaySpend(yesterday, "bob", 1, 0, 2_500),
        DaySpend(today, "alice", 1, 1, 1_000),
        DaySpend(today, "bob", 1, 1, 0),
    ]
    assert await store.spend_by_day("alice", since, "model") == [
        DaySpend(yesterday, "gpt-5", 1, 0, 0),
        DaySpend(today, "kimi-k2", 1, 1, 1_000),
    ]
    with pytest.raises(ValueError, match="split by"):
        await store.spend_by_day(None, since, "provider; DROP TABLE ledger")  # type: ignore[arg-type]


def test_a_query_refuses_a_limit_out_of_range() -> None:
    with pytest.raises(ValueError, match="limit"):
        CallQuery(limit=0)
    with pytest.raises(ValueError, match="limit"):
        CallQuery(limit=501)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    costs=st.lists(
        st.tuples(st.sampled_from(["alice", "bob"]), st.integers(0, 3), st.none() | st.integers(0, 10**9)),
        max_size=12,
    )
)
async def test_daily_sums_match_the_rows(store: AnyStore, costs: list[tuple[str, int, int | None]]) -> None:
    run = next(_examples)  # the store outlives an example: each writes members of its own
    rows = [
        ledger_row(START + timedelta(days=day), principal=f"{who}-{run}", cost_micro_usd=cost)
        for who, day, cost in costs
    ]
    for row in rows:
        await store.record_call(row)
    expected: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row.at.strftime("%Y-%m-%d"), row.principal)
        expected[key] = expected.get(key, 0) + (row.cost_micro_usd or 0)
    got = await store.spend_by_day(None, START, "principal")
    assert {(spend.day, spend.key): spend.cost_micro_usd for spend in got if spend.key.endswith(f"-{run}")} == expected
