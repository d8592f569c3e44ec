"""Per-member rates and the per-member monthly budget against the database (both backends): the
sliding minute's rule holds for concurrent uses from several stores (as from several replicas), and
a settled use counts its real tokens."""

from __future__ import annotations

from datetime import UTC, datetime

import anyio
import pytest
from store_support import AnyStore, FakeClock, StoreFactory, ledger_row

from colibri_router.store import BudgetExceeded, BudgetLimits
from colibri_router.store.rates import RateLimits, RateRefusal


async def test_a_member_gets_exactly_its_calls_per_minute(store: AnyStore) -> None:
    limits = RateLimits(rpm=3)
    answers = [await store.take_rate("kim", limits, calls=1, tokens=0) for _ in range(4)]
    assert [refused is None for _, refused in answers] == [True, True, True, False]
    refused = answers[-1][1]
    assert isinstance(refused, RateRefusal)
    assert (refused.limit, refused.used, refused.allowed) == ("rpm", 3, 3)
    assert 0 < refused.retry_after_s <= 60
    _, other = await store.take_rate("ann", limits, calls=1, tokens=0)  # every member has its own minute
    assert other is None


async def test_tokens_are_estimated_then_settled(store: AnyStore) -> None:
    limits = RateLimits(tpm=1000)
    held, refused = await store.take_rate("kim", limits, calls=0, tokens=800)
    assert refused is None
    _, refused = await store.take_rate("kim", limits, calls=0, tokens=300)
    assert refused is not None and (refused.limit, refused.used) == ("tpm", 800)
    await store.settle_rate(held, 50)  # it really counted 50
    _, refused = await store.take_rate("kim", limits, calls=0, tokens=300)
    assert refused is None


@pytest.mark.parametrize(("uses", "rpm"), [(30, 10), (12, 1)])
async def test_concurrent_uses_from_two_stores_admit_exactly_the_limit(
    new_store: StoreFactory, uses: int, rpm: int
) -> None:
    stores = [new_store(), new_store()]
    admitted: list[bool] = []

    async def use(store: AnyStore) -> None:
        _, refused = await store.take_rate("kim", RateLimits(rpm=rpm), calls=1, tokens=0)
        admitted.append(refused is None)

    async with anyio.create_task_group() as group:
        for number in range(uses):
            group.start_soon(use, stores[number % 2])
    assert admitted.count(True) == rpm


async def test_the_per_member_monthly_budget_counts_only_that_member_this_month(
    store: AnyStore, clock: FakeClock
) -> None:
    limits = BudgetLimits(monthly_per_principal_micro_usd=100, daily_per_principal_micro_usd=1_000)
    clock.now = datetime(2025, 3, 20, tzinfo=UTC)
    await store.record_call(ledger_row(datetime(2025, 2, 28, tzinfo=UTC), principal="kim", cost_micro_usd=500))
    await store.record_call(ledger_row(datetime(2025, 3, 2, tzinfo=UTC), principal="kim", cost_micro_usd=60))
    await store.record_call(ledger_row(datetime(2025, 3, 3, tzinfo=UTC), principal="ann", cost_micro_usd=900))
    await store.reserve_budget("kim", 40, limits)  # 60 spent + 40 in flight = 100 this month
    with pytest.raises(BudgetExceeded) as raised:
        await store.reserve_budget("kim", 1, limits)
    assert (raised.value.scope, raised.value.spent_micro) == ("monthly_per_principal", 100)
    assert raised.value.resets_at == datetime(2025, 4, 1, tzinfo=UTC)
    assert "monthly budget per caller" in raised.value.message
    await store.reserve_budget("ann", 1, BudgetLimits(monthly_per_principal_micro_usd=1_000))
