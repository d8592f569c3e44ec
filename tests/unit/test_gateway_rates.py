"""The rate rule (colibri_router.store.rates.admission): a sliding minute, within the limit always,
and a refusal's wait is exactly when enough of the window has aged out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from colibri_router.store.rates import WINDOW_S, RateEvent, RateLimits, admission


def test_events_older_than_a_minute_no_longer_count() -> None:
    events = [RateEvent(0.0, 1, 0), RateEvent(30.0, 1, 0)]
    refused = admission(events, 59.0, RateLimits(rpm=2), calls=1, tokens=0)
    assert refused is not None and refused.retry_after_s == 1.0  # the first ages out at 60
    assert admission(events, 60.0, RateLimits(rpm=2), calls=1, tokens=0) is None


def test_a_use_that_counts_nothing_against_a_limit_is_not_checked_by_it() -> None:
    events = [RateEvent(0.0, 5, 5000)]
    assert admission(events, 1.0, RateLimits(rpm=5, tpm=10), calls=0, tokens=0) is None
    refused = admission(events, 1.0, RateLimits(rpm=5, tpm=10_000), calls=0, tokens=6000)
    assert refused is not None and refused.limit == "tpm"


uses = st.lists(
    st.tuples(st.floats(0, 5, allow_nan=False), st.integers(0, 3), st.integers(0, 500)), min_size=1, max_size=60
)


@given(uses, st.integers(1, 10), st.integers(1, 2000))
def test_admitted_uses_never_exceed_a_limit_in_any_minute(
    steps: list[tuple[float, int, int]], rpm: int, tpm: int
) -> None:
    limits = RateLimits(rpm=rpm, tpm=tpm)
    now, admitted = 0.0, []
    for gap, calls, tokens in steps:
        now += gap
        refused = admission(admitted, now, limits, calls=calls, tokens=tokens)
        if refused is None:
            admitted.append(RateEvent(now, calls, tokens))
        else:
            # Waiting as told is enough (a microsecond more: float rounding).
            later = now + refused.retry_after_s + 1e-6
            assert admission(admitted, later, limits, calls=calls, tokens=tokens) is None or calls > rpm or tokens > tpm
            assert 0 < refused.retry_after_s <= WINDOW_S
    for event in admitted:
        window = [e for e in admitted if event.at_s - WINDOW_S < e.at_s <= event.at_s]
        assert sum(e.calls for e in window) <= rpm
        assert sum(e.tokens for e in window) <= tpm
