"""Budget admission against the database: reservations count until settled or expired, windows
reset in UTC, and concurrent admissions admit exactly what one-at-a-time admissions would."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import anyio
import pytest
from store_support import AnyStore, DatabasePeek, FakeClock, StoreFactory, ledger_row

from colibri_router.store import BudgetExceeded, BudgetLimits

DAILY_100 = BudgetLimits(daily_micro_usd=100)


async def test_admitted_calls_reserve_their_estimate_until_the_limit_is_reached(store: AnyStore) -> None:
    # Spend before each call: 0, 30, 60, 90: all below 100, so all four are admitted; then 120.
    for _ in range(4):
        await store.reserve_budget("alice", 30, DAILY_100)
    with pytest.raises(BudgetExceeded) as raised:
        await store.reserve_budget("alice", 30, DAILY_100)
    assert (raised.value.spent_micro, raised.value.limit_micro) == (120, 100)


async def test_a_call_is_refused_when_the_spend_equals_the_limit(store: AnyStore, clock: FakeClock) -> None:
    await store.record_call(ledger_row(clock.now, cost_micro_usd=100))
    with pytest.raises(BudgetExceeded):
        await store.reserve_budget("alice", 0, DAILY_100)


async def test_settling_replaces_the_estimate_by_the_real_cost(
    store: AnyStore, clock: FakeClock, peek: DatabasePeek
) -> None:
    held = await store.reserve_budget("alice", 100, DAILY_100)
    with pytest.raises(BudgetExceeded):
        await store.reserve_budget("alice", 1, DAILY_100)

    await store.settle(held, ledger_row(clock.now, cost_micro_usd=40))
    assert await peek.count("budget_reservations") == 0
    assert (await store.usage_report("alice")).total.cost_micro_usd == 40
    await store.reserve_budget("alice", 1, DAILY_100)  # 40 spent: room again


async def test_a_reservation_that_is_never_settled_expires(store: AnyStore, clock: FakeClock) -> None:
    await store.reserve_budget("alice", 100, DAILY_100)  # its process dies: no settle
    clock.advance(minutes=59)
    with pytest.raises(BudgetExceeded):
        await store.reserve_budget("alice", 1, DAILY_100)
    clock.advance(minutes=1)
    await store.reserve_budget("alice", 1, DAILY_100)


async def test_a_settle_after_expiry_still_writes_the_row(store: AnyStore, clock: FakeClock) -> None:
    late = await store.reserve_budget("alice", 10, DAILY_100)
    clock.advance(hours=2)
    await store.reserve_budget("alice", 10, DAILY_100)  # purges the expired reservation
    await store.settle(late, ledger_row(clock.now, cost_micro_usd=7))
    assert (await store.usage_report("alice")).total.cost_micro_usd == 7


async def test_the_daily_budget_resets_at_utc_midnight(store: AnyStore, clock: FakeClock) -> None:
    clock.now = datetime(2025, 3, 14, 23, 59, tzinfo=UTC)
    await store.record_call(ledger_row(clock.now, cost_micro_usd=100))
    with pytest.raises(BudgetExceeded) as raised:
        await store.reserve_budget("alice", 1, DAILY_100)
    assert raised.value.resets_at == datetime(2025, 3, 15, tzinfo=UTC)
    clock.advance(minutes=1)
    await store.reserve_budget("alice", 1, DAILY_100)


async def test_the_monthly_budget_counts_the_whole_utc_month(store: AnyStore, clock: FakeClock) -> None:
    monthly = BudgetLimits(monthly_micro_usd=100, daily_micro_usd=1_000)
    await store.record_call(ledger_row(datetime(2025, 2, 28, 23, 0, tzinfo=UTC), cost_micro_usd=500))  # last month
    await store.record_call(ledger_row(datetime(2025, 3, 1, 0, 0, tzinfo=UTC), cost_micro_usd=60))
    await store.record_call(ledger_row(datetime(2025, 3, 10, 0, 0, tzinfo=UTC), cost_micro_usd=40))
    with pytest.raises(BudgetExceeded) as raised:
        await store.reserve_budget("alice", 1, monthly)
    assert (raised.value.scope, raised.value.spent_micro) == ("monthly", 100)
    assert raised.value.resets_at == datetime(2025, 4, 1, tzinfo=UTC)
    clock.now = datetime(2025, 4, 1, tzinfo=UTC)
    await store.reserve_budget("alice", 1, monthly)


async def test_the_per_principal_budget_counts_only_that_principal(store: AnyStore, clock: FakeClock) -> None:
    limits = BudgetLimits(daily_per_principal_micro_usd=100, daily_micro_usd=250)
    await store.record_call(ledger_row(clock.now, principal="alice", cost_micro_usd=60))
    await store.reserve_budget("alice", 40, limits)  # alice: 60 spent + 40 in flight = 100
    with pytest.raises(BudgetExceeded) as raised:
        await store.reserve_budget("alice", 1, limits)
    assert (raised.value.scope, raised.value.spent_micro) == ("daily_per_principal", 100)

    await store.reserve_budget("bob", 100, limits)  # bob has his own 100; the total is now 200
    await store.reserve_budget("carol", 50, limits)  # 200 < 250: admitted; the total is now 250
    with pytest.raises(BudgetExceeded) as raised:
        await store.reserve_budget("dave", 1, limits)
    assert (raised.value.scope, raised.value.spent_micro) == ("daily", 250)


async def test_an_unpriced_call_reserves_nothing(store: AnyStore, clock: FakeClock) -> None:
    for _ in range(3):
        await store.reserve_budget("alice", 0, DAILY_100)
    await store.record_call(ledger_row(clock.now, cost_micro_usd=99))
    await store.reserve_budget("alice", 0, DAILY_100)


async def test_reservations_check_their_inputs(store: AnyStore, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="negative"):
        await store.reserve_budget("alice", -1, DAILY_100)
    held = await store.reserve_budget("alice", 1, DAILY_100)
    with pytest.raises(ValueError, match="same principal"):
        await store.settle(held, ledger_row(clock.now, principal="bob"))


@pytest.mark.parametrize(
    ("calls", "estimate", "limit"), [(40, 7, 100), (30, 10, 100), (25, 1_000, 1), (12, 50, 10_000)]
)
async def test_concurrent_admissions_admit_exactly_what_fits(
    new_store: StoreFactory, peek: DatabasePeek, calls: int, estimate: int, limit: int
) -> None:
    """Three stores on one database (three processes on a SQLite file, three replicas with a pool
    each on PostgreSQL), all admissions at once: exactly min(N, ceil(L / e)) pass."""
    stores = [new_store() for _ in range(3)]
    limits = BudgetLimits(daily_micro_usd=limit)
    admitted: list[int] = []
    refused: list[int] = []

    async def admit(number: int) -> None:
        try:
            await stores[number % len(stores)].reserve_budget(f"user-{number % 4}", estimate, limits)
        except BudgetExceeded:
            refused.append(number)
        else:
            admitted.append(number)

    async with anyio.create_task_group() as group:
        for number in range(calls):
            group.start_soon(admit, number)

    assert len(admitted) == min(calls, math.ceil(limit / estimate))
    assert len(admitted) + len(refused) == calls
    assert await peek.count("budget_reservations") == len(admitted)
