"""What one request to one model could cost at most: the price a service reserves in the budgets and
holds against a cost cap before anything is sent, from the one token estimate
(:mod:`colibri_router.token_estimate`) and the price table (:mod:`colibri_router.pricing`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from colibri_router.pricing import worst_case_cost
from colibri_router.token_estimate import request_tokens

if TYPE_CHECKING:
    from colibri_router.conversation import CompletionRequest
    from colibri_router.providers import Choice

__all__ = ["worst_case"]


def worst_case(choice: Choice, request: CompletionRequest, extra_input_tokens: int = 0) -> float | None:
    """What sending ``request`` to ``choice`` could cost at most: its estimated input (plus
    ``extra_input_tokens``) and all of its ``max_tokens``; None when no price is known."""
    return worst_case_cost(
        choice.provider.price_provider,
        choice.model,
        request_tokens(request) + extra_input_tokens,
        request.max_tokens,
        local=choice.provider.local,
    )
