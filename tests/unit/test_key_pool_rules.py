"""The key pool's own rules (engine/keys.py), on a clock the test moves: turns, set-aside times, fingerprints."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.engine.keys import (
    MAX_QUOTA_BACKOFF_S,
    MAX_RATE_BACKOFF_S,
    QUOTA_BACKOFF_S,
    RATE_BACKOFF_S,
    KeyPool,
    SetAside,
    fingerprint,
    split_keys,
)
from colibri_router.providers.builtin import BUILTIN_PROVIDERS


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def pool_of(n: int) -> tuple[KeyPool, Clock]:
    clock = Clock()
    return KeyPool("gemini", [f"key-number-{i}-abcdef" for i in range(n)], clock=clock), clock


@given(st.integers(min_value=1, max_value=8), st.integers(min_value=1, max_value=5))
def test_calls_start_at_each_key_in_turn(n: int, rounds: int) -> None:
    pool, _ = pool_of(n)
    starts = [pool.first() for _ in range(n * rounds)]
    assert starts == list(range(n)) * rounds


@given(st.lists(st.sampled_from(["rate_limited", "out_of_quota", "invalid"]), min_size=1, max_size=6))
def test_a_set_aside_key_is_never_where_a_call_starts_while_another_is_usable(reasons: list[str]) -> None:
    pool, _ = pool_of(len(reasons) + 1)
    for index, reason in enumerate(reasons):
        pool.set_aside(index, reason, None)  # type: ignore[arg-type]
    assert {pool.first() for _ in range(10)} == {len(reasons)}


def test_a_rate_limit_without_retry_after_backs_off_doubling_up_to_its_cap() -> None:
    pool, clock = pool_of(2)
    waits = [pool.set_aside(0, "rate_limited", None).until - clock.now for _ in range(10)]
    assert waits[:4] == [RATE_BACKOFF_S, 2 * RATE_BACKOFF_S, 4 * RATE_BACKOFF_S, 8 * RATE_BACKOFF_S]
    assert max(waits) == MAX_RATE_BACKOFF_S


def test_retry_after_decides_a_rate_limited_keys_return() -> None:
    pool, clock = pool_of(2)
    assert pool.set_aside(0, "rate_limited", 42.0).until == clock.now + 42.0
    clock.now += 41.9
    assert not pool.usable(0)
    clock.now += 0.2
    assert pool.usable(0)


def test_an_answer_forgets_the_keys_strikes() -> None:
    pool, clock = pool_of(2)
    pool.set_aside(0, "rate_limited", None)
    pool.set_aside(0, "rate_limited", None)
    pool.answered(0)
    assert pool.set_aside(0, "rate_limited", None).until - clock.now == RATE_BACKOFF_S


def test_out_of_quota_is_an_hour_doubling_to_a_day_or_the_providers_longer_hint() -> None:
    pool, clock = pool_of(2)
    waits = [pool.set_aside(0, "out_of_quota", None).until - clock.now for _ in range(8)]
    assert waits[:2] == [QUOTA_BACKOFF_S, 2 * QUOTA_BACKOFF_S]
    assert max(waits) == MAX_QUOTA_BACKOFF_S
    assert pool.set_aside(1, "out_of_quota", 5 * 86400.0).until - clock.now == 5 * 86400.0


def test_an_invalid_key_stays_set_aside_and_is_never_the_soonest() -> None:
    pool, clock = pool_of(3)
    pool.set_aside(0, "invalid", None)
    pool.set_aside(1, "out_of_quota", None)
    pool.set_aside(2, "rate_limited", 5.0)
    assert math.isinf(pool.set_aside_now()[pool.fingerprints[0]].until)
    assert pool.soonest() == 2
    clock.now += 10 * 86400
    assert [s.state for s in pool.statuses()] == ["invalid", "usable", "usable"]
    assert pool.statuses()[0].seconds_left is None


def test_statuses_name_keys_by_fingerprint_only() -> None:
    pool, _ = pool_of(2)
    pool.set_aside(1, "rate_limited", 30.0)
    statuses = pool.statuses()
    assert [(s.fingerprint, s.state, s.seconds_left) for s in statuses] == [
        (fingerprint("gemini", "key-number-0-abcdef"), "usable", None),
        (fingerprint("gemini", "key-number-1-abcdef"), "rate_limited", 30.0),
    ]
    assert "key-number" not in repr(pool) + repr(statuses)


@given(st.text(min_size=1, max_size=80))
def test_a_fingerprint_is_the_provider_and_six_hex_digits_and_holds_nothing_of_the_key(key: str) -> None:
    value = fingerprint("openai", key)
    provider, digits = value.split("#")
    assert provider == "openai" and len(digits) == 6 and set(digits) <= set("0123456789abcdef")


@pytest.mark.parametrize(
    ("value", "keys"),
    [
        ("k1", ("k1",)),
        ("k1,k2,k3", ("k1", "k2", "k3")),
        (" k1 , k2 ,, ", ("k1", "k2")),
        ("", ()),
        (None, ()),
    ],
)
def test_a_variable_holds_comma_separated_keys(value: str | None, keys: tuple[str, ...]) -> None:
    assert split_keys(value) == keys


@pytest.mark.parametrize(
    "pattern", sorted({spec.key_pattern for spec in BUILTIN_PROVIDERS if spec.key_pattern is not None})
)
@given(data=st.data())
def test_no_providers_key_shape_holds_a_comma(pattern: str, data: st.DataObject) -> None:
    # A comma separates keys (docs/keys.md): no key of any known shape can contain one.
    key = data.draw(st.from_regex(re.compile(pattern), fullmatch=True))
    assert "," not in key
    assert split_keys(f"{key},{key}") == (key, key)


def test_anthropics_credit_message_is_a_quota() -> None:
    from colibri_router.engine.classify import classify
    from colibri_router.providers import phrases

    message = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing."
    assert classify(400, ("invalid_request_error",), message, phrases.ANTHROPIC) == "QUOTA_EXCEEDED"


class MemoryStore:
    """A shared store in memory: what every replica would read."""

    def __init__(self) -> None:
        self.rows: dict[str, SetAside] = {}

    def current(self, provider: str) -> list[SetAside]:
        return list(self.rows.values())

    def record(self, provider: str, entry: SetAside) -> None:
        self.rows[entry.fingerprint] = entry

    def clear(self, provider: str, key_fingerprint: str) -> None:
        self.rows.pop(key_fingerprint, None)

    async def refresh(self, *, force: bool = False) -> None:
        return None

    async def flush(self) -> None:
        return None


def test_a_key_another_replica_set_aside_is_skipped_and_an_answer_brings_it_back_for_all() -> None:
    store = MemoryStore()
    here, _ = pool_of(2)
    there, _ = pool_of(2)
    here.store = there.store = store

    there.set_aside(0, "rate_limited", 30.0)
    assert not here.usable(0) and here.first() == 1
    here.answered(0)  # a retry's wait asked it anyway, and it answered
    assert store.rows == {} and there.usable(0)
