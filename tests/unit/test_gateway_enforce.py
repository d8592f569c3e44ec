"""The checks below the shell (colibri_router.gateway.enforce, .budgets) for the member a call runs for."""

from __future__ import annotations

import pytest

from colibri_router.errors import ConfigError
from colibri_router.gateway.budgets import member_budgets
from colibri_router.gateway.enforce import check_chain, gate
from colibri_router.gateway.errors import NotAllowedError
from colibri_router.gateway.member import Member, acting_for, current_member
from colibri_router.gateway.policy import Rules
from colibri_router.providers import BUILTIN, Choice
from colibri_router.router import build_request
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput
from colibri_router.store import BudgetLimits, StoreError, usd_to_micro

KIMI = Choice(BUILTIN["kimi"], "kimi-k2.6")
CLAUDE_CODE = Choice(BUILTIN["claude-code"], "sonnet")


def test_without_a_member_nothing_is_checked() -> None:
    assert current_member() is None
    check_chain([CLAUDE_CODE, KIMI])
    limits = BudgetLimits(daily_micro_usd=5)
    assert member_budgets(limits) is limits


def test_the_chain_is_refused_at_its_first_model_outside_the_policy() -> None:
    with acting_for(Member("kim", Rules(models=("kimi*",), agent_cli=False))):
        check_chain([KIMI, ConfigError("an attempt's own error, left for the chain"), None])
        with pytest.raises(NotAllowedError, match="agent_cli = false") as refused:
            check_chain([KIMI, CLAUDE_CODE])
    assert (refused.value.provider, refused.value.model) == ("claude-code", "sonnet")
    assert current_member() is None  # the scope ends with the call


def test_a_members_budgets_become_per_caller_limits() -> None:
    with acting_for(Member("kim", Rules(daily_usd=3, monthly_usd=40))):
        both = member_budgets(BudgetLimits(daily_micro_usd=100_000_000, daily_per_principal_micro_usd=2_000_000))
        alone = member_budgets(BudgetLimits())
    # The smaller per-day limit holds: the environment's 2 against the member's 3.
    assert both.daily_per_principal_micro_usd == 2_000_000 and both.daily_micro_usd == 100_000_000
    assert both.monthly_per_principal_micro_usd == usd_to_micro(40)
    assert alone.daily_per_principal_micro_usd == usd_to_micro(3)


async def test_the_gate_refuses_a_request_whose_estimate_alone_exceeds_tpm() -> None:
    request, _ = build_request(
        call_from(RouterCallInput.model_validate({"prompt": "hi", "max_tokens": 500})), KIMI.model
    )
    with acting_for(Member("tok", Rules(tpm=100))), pytest.raises(NotAllowedError, match="exceed tpm 100"):
        await gate(KIMI, request)
    with (
        acting_for(Member("cap", Rules(max_cost_usd_per_call=0.0))),
        pytest.raises(NotAllowedError, match="max_cost_usd_per_call"),
    ):
        await gate(KIMI, request)
    assert (await gate(KIMI, request)).event is None  # no member: nothing taken


class _FailingRates:
    async def take_rate(self, *_args: object, **_kwargs: object) -> None:
        raise AssertionError("not taken here")

    async def settle_rate(self, event_id: str, tokens: int) -> None:
        raise StoreError("postgresql://db", ConnectionError("gone"), backend="postgresql")


async def test_a_settle_the_store_cannot_write_never_breaks_the_answered_call() -> None:
    from colibri_router.conversation import Usage
    from colibri_router.gateway.enforce import Gate
    from colibri_router.gateway.limiter import Taken

    await Gate(event=Taken(_FailingRates(), "rt_x")).settle(Usage(10, 5))  # no exception: the answer stands
