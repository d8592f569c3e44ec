"""The confirmation rule (:mod:`colibri_router.confirmation`) over varied prices and thresholds: asked
exactly when the priced worst case is above the threshold, at most once per call, a cap when the
client cannot be asked, and the question one line naming every model."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.types import ClientCapabilities, ElicitationCapability, FormElicitationCapability, UrlElicitationCapability

from colibri_router.confirmation import Confirmation, usd
from colibri_router.errors import ConfirmationDeclinedError, CostCapError
from colibri_router.retry import Deadline

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.:", min_size=1, max_size=20)
costs = st.none() | st.floats(min_value=0, max_value=50, allow_nan=False)
priced_lists = st.lists(st.tuples(names, costs), min_size=1, max_size=6)
thresholds = st.floats(min_value=0, max_value=100, allow_nan=False)


class Asker:
    def __init__(self, answer: bool | None) -> None:
        self.answer = answer
        self.questions: list[str] = []

    async def __call__(self, question: str) -> bool:
        self.questions.append(question)
        if self.answer is None:
            await anyio.sleep_forever()
        assert self.answer is not None
        return self.answer


def run(confirmation: Confirmation, priced: list[tuple[str, float | None]]) -> BaseException | None:
    async def check() -> BaseException | None:
        try:
            await confirmation.check(priced)
        except (ConfirmationDeclinedError, CostCapError) as error:
            return error
        return None

    return anyio.run(check)


def over(priced: list[tuple[str, float | None]], threshold: float) -> bool:
    return math.fsum(cost for _, cost in priced if cost is not None) > threshold


@given(priced_lists, thresholds, st.booleans())
def test_asked_exactly_when_the_worst_case_is_above_the_threshold(
    priced: list[tuple[str, float | None]], threshold: float, yes: bool
) -> None:
    asker = Asker(yes)
    confirmation = Confirmation(asker, threshold, Deadline.after(60))
    error = run(confirmation, priced)
    if not over(priced, threshold):
        assert asker.questions == [] and error is None
        return
    (question,) = asker.questions
    assert "\n" not in question and all(name in question for name, _ in priced)
    assert "COLIBRI_CONFIRM_OVER_USD" in question
    if yes:
        assert error is None and confirmation.accepted
        run(confirmation, priced)  # a later attempt of the same call is not asked again
        assert len(asker.questions) == 1
    else:
        assert isinstance(error, ConfirmationDeclinedError) and not error.retryable_later
        assert error.code == error.kind == "CONFIRMATION_DECLINED"


@given(priced_lists, thresholds)
def test_a_client_that_cannot_be_asked_gets_the_threshold_as_a_cap(
    priced: list[tuple[str, float | None]], threshold: float
) -> None:
    error = run(Confirmation(None, threshold, Deadline.after(60)), priced)
    if over(priced, threshold):
        assert isinstance(error, CostCapError) and error.code == "BUDGET_EXCEEDED"
    else:
        assert error is None


@given(priced_lists)
def test_without_a_threshold_nothing_is_asked_or_capped(priced: list[tuple[str, float | None]]) -> None:
    asker = Asker(False)
    confirmation = Confirmation(asker, None, Deadline.after(60))
    assert not confirmation.active
    assert run(confirmation, priced) is None and asker.questions == []
    assert run(Confirmation(None, None, Deadline.after(60)), priced) is None


@pytest.mark.parametrize("remaining", [0.2, 0.0, -5.0])
def test_no_answer_within_the_deadline_is_a_refusal(remaining: float) -> None:
    error = run(Confirmation(Asker(None), 0.0, Deadline.after(remaining)), [("m", 1.0)])
    assert isinstance(error, ConfirmationDeclinedError) and "no answer" in error.message


@pytest.mark.parametrize(
    ("capability", "asks"),
    [
        (None, False),
        (ElicitationCapability(), True),  # the form mode, before modes were named
        (ElicitationCapability(form=FormElicitationCapability()), True),
        (ElicitationCapability(form=FormElicitationCapability(), url=UrlElicitationCapability()), True),
        (ElicitationCapability(url=UrlElicitationCapability()), False),  # it cannot show a form
    ],
)
def test_only_a_client_that_takes_a_form_is_asked(capability: ElicitationCapability | None, asks: bool) -> None:
    from colibri_router.server.confirm import declares_elicitation

    ctx: Any = SimpleNamespace(client_capabilities=ClientCapabilities(elicitation=capability))
    assert declares_elicitation(ctx) is asks


@given(st.floats(min_value=0, max_value=1000, allow_nan=False))
def test_amounts_never_read_as_zero_unless_they_are(amount: float) -> None:
    shown = usd(amount)
    assert shown.startswith("$") and (float(shown[1:]) > 0 or amount < 5e-7)
