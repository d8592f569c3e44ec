"""The backend-neutral rules: money conversion, thread titles, UTC windows, the admission rule."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.store import BudgetExceeded, BudgetLimits, Since, format_usd, micro_to_usd, usd_to_micro
from colibri_router.store.budget import check_admission
from colibri_router.store.errors import BudgetScope
from colibri_router.store.titles import thread_title
from colibri_router.store.utc_windows import next_day_start, next_month_start, window_start

NOW = datetime(2025, 3, 14, 12, 30, tzinfo=UTC)

# Money


@pytest.mark.parametrize(
    ("usd", "micro"),
    [
        (0.0000015, 2),  # a tie in the decimal the float prints as rounds up, whatever its binary value
        (0.0000025, 3),
        (0.0000014999, 1),
        (-0.0000015, -2),  # half up means ties away from zero
        (Decimal("12.3456785"), 12_345_679),
        (Decimal("0.0000004"), 0),
        (1e9, 1_000_000_000_000_000),
        (0.0, 0),
    ],
)
def test_usd_to_micro_rounds_half_up(usd: float | Decimal, micro: int) -> None:
    assert usd_to_micro(usd) == micro


@pytest.mark.parametrize("usd", [math.nan, math.inf, -math.inf])
def test_usd_to_micro_refuses_non_finite_amounts(usd: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        usd_to_micro(usd)


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_micro_round_trips_through_usd(micro: int) -> None:
    assert usd_to_micro(micro_to_usd(micro)) == micro


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_usd_to_micro_is_within_half_a_micro_dollar(usd: float) -> None:
    assert abs(micro_to_usd(usd_to_micro(usd)) - usd) <= 0.5e-6 + 1e-9 * usd


@pytest.mark.parametrize(
    ("micro", "text"),
    [(12_500_000, "$12.50"), (1_500, "$0.0015"), (0, "$0.00"), (-12_345_678, "-$12.345678"), (10, "$0.00001")],
)
def test_format_usd_shows_cents_and_any_further_digits(micro: int, text: str) -> None:
    assert format_usd(micro) == text


# Titles

_user_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=200)


@given(_user_text)
def test_title_is_the_first_user_text_on_one_line_cut_to_80(text: str) -> None:
    title = thread_title([{"role": "user", "content": text}])
    assert title == " ".join(text.split())[:80]
    assert len(title) <= 80
    assert "\n" not in title


def test_title_skips_assistant_turns_tool_results_and_blank_text() -> None:
    messages = [
        {"role": "assistant", "content": "an assistant turn is never the title"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "tool output"}]},
        {"role": "user", "content": [{"type": "image", "source": {}}, {"type": "text", "text": "   "}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "What is\n\nthe  weather?"}, {"type": "text", "text": "x"}],
        },
    ]
    assert thread_title(messages) == "What is the weather?"


def test_title_is_empty_while_no_user_wrote_text() -> None:
    assert thread_title([]) == ""
    assert thread_title([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]) == ""


# UTC windows


@pytest.mark.parametrize(
    ("since", "start"),
    [
        ("today", datetime(2025, 3, 14, tzinfo=UTC)),
        ("7d", datetime(2025, 3, 8, tzinfo=UTC)),
        ("30d", datetime(2025, 2, 13, tzinfo=UTC)),
        ("all", None),
    ],
)
def test_since_windows_are_calendar_days_including_today(since: Since, start: datetime | None) -> None:
    assert window_start(since, NOW) == start


def test_windows_are_drawn_in_utc_whatever_the_clock_zone() -> None:
    # 01:00 on the 15th in UTC+3 is 22:00 on the 14th in UTC.
    late = datetime(2025, 3, 15, 1, 0, tzinfo=timezone(timedelta(hours=3)))
    assert window_start("today", late) == datetime(2025, 3, 14, tzinfo=UTC)


def test_budgets_reset_at_the_next_utc_midnight_and_first_of_month() -> None:
    assert next_day_start(NOW) == datetime(2025, 3, 15, tzinfo=UTC)
    assert next_month_start(NOW) == datetime(2025, 4, 1, tzinfo=UTC)
    assert next_month_start(datetime(2025, 12, 31, 23, 59, tzinfo=UTC)) == datetime(2026, 1, 1, tzinfo=UTC)


# The admission rule


def _spend(values: dict[BudgetScope, int], asked: list[BudgetScope] | None = None) -> Callable[[BudgetScope], int]:
    def committed(scope: BudgetScope) -> int:
        if asked is not None:
            asked.append(scope)
        return values[scope]

    return committed


def test_a_call_is_admitted_while_the_spend_is_below_the_limit() -> None:
    check_admission(BudgetLimits(daily_micro_usd=100), _spend({"daily": 99}), NOW)


def test_a_call_is_refused_once_the_spend_has_reached_the_limit() -> None:
    with pytest.raises(BudgetExceeded) as raised:
        check_admission(BudgetLimits(daily_micro_usd=100), _spend({"daily": 100}), NOW)
    error = raised.value
    assert (error.scope, error.spent_micro, error.limit_micro) == ("daily", 100, 100)
    assert error.resets_at == datetime(2025, 3, 15, tzinfo=UTC)
    assert (error.code, error.kind) == ("BUDGET_EXCEEDED", "BUDGET_EXCEEDED")
    assert not error.retryable


def test_the_error_says_what_was_spent_the_limit_and_when_it_resets() -> None:
    with pytest.raises(BudgetExceeded) as raised:
        check_admission(BudgetLimits(monthly_micro_usd=5_000_000), _spend({"monthly": 5_250_000}), NOW)
    message = str(raised.value)
    assert "monthly budget of $5.00" in message
    assert "$5.25 spent" in message
    assert "resets at 2025-04-01T00:00:00Z" in message


def test_when_several_limits_are_reached_the_one_resetting_last_is_named() -> None:
    limits = BudgetLimits(daily_micro_usd=10, monthly_micro_usd=10, daily_per_principal_micro_usd=10)
    with pytest.raises(BudgetExceeded) as raised:
        check_admission(limits, _spend({"daily": 10, "monthly": 10, "daily_per_principal": 10}), NOW)
    assert raised.value.scope == "monthly"
    with pytest.raises(BudgetExceeded) as raised:
        check_admission(limits, _spend({"daily": 10, "monthly": 9, "daily_per_principal": 10}), NOW)
    assert raised.value.scope == "daily"


def test_only_configured_scopes_are_measured() -> None:
    asked: list[BudgetScope] = []
    check_admission(BudgetLimits(daily_per_principal_micro_usd=10), _spend({"daily_per_principal": 0}, asked), NOW)
    check_admission(BudgetLimits(), _spend({}, asked), NOW)
    assert asked == ["daily_per_principal"]


def test_limits_from_usd_are_micro_dollars_and_never_negative() -> None:
    limits = BudgetLimits.from_usd(daily=1.5, monthly=Decimal("20"))
    assert limits == BudgetLimits(daily_micro_usd=1_500_000, monthly_micro_usd=20_000_000)
    with pytest.raises(ValueError, match="negative"):
        BudgetLimits(daily_micro_usd=-1)
