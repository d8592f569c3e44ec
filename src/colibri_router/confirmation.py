"""Ask before an expensive call: ``COLIBRI_CONFIRM_OVER_USD``.

A call whose worst case (every model it will ask, priced before anything is sent) is above the
threshold first puts one question to the user, through the MCP client's elicitation
(:data:`colibri_router.session.Ask`, made by the shell in the form the client's protocol era has).
A refusal, a dismissal, or no answer within the call's deadline ends the call with
``CONFIRMATION_DECLINED`` and nothing is sent. A caller that cannot be asked (a client without the
``elicitation`` capability, Streamable HTTP, the command line) gets the threshold as a cost cap:
``BUDGET_EXCEEDED``, as ``max_cost_usd`` would answer.

A call is asked at most once: a router_call asks at its first attempt above the threshold (a later
fallback is covered by the same answer), a router_ask_many asks once for all its models and judge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from colibri_router.errors import ConfirmationDeclinedError, CostCapError
from colibri_router.retry import Deadline
from colibri_router.session import Ask

VARIABLE = "COLIBRI_CONFIRM_OVER_USD"
# A model and what asking it could cost at most (None: no price known, so it is not counted).
Priced = tuple[str, float | None]


@dataclass
class Confirmation:
    """One call's question: the client's ``ask`` (None: it cannot be asked), the threshold (None: never
    ask) and the call's deadline, which bounds the wait for an answer."""

    ask: Ask | None
    threshold: float | None
    deadline: Deadline
    accepted: bool = False

    @property
    def active(self) -> bool:
        """Whether the call must be priced for it (False: no threshold, or already accepted)."""
        return self.threshold is not None and not self.accepted

    async def check(self, priced: Sequence[Priced]) -> None:
        """Ask (or cap) when the worst case of ``priced`` is above the threshold; returns when the call
        may go on, raises when it may not. Models without a price count nothing (the services warn)."""
        if not self.active:
            return
        assert self.threshold is not None
        worst = math.fsum(cost for _, cost in priced if cost is not None)
        if worst <= self.threshold:
            return
        what = f"{_names(priced)} could cost up to {usd(worst)}, above {VARIABLE} ${self.threshold:g}"
        if self.ask is None:
            raise CostCapError(f"{what}; this client cannot be asked to confirm (no MCP elicitation); nothing was sent")
        answer: bool | None = None
        with anyio.move_on_after(max(self.deadline.remaining(), 0.0)):
            answer = await self.ask(f"{what}. Send it?")
        if answer is None:
            raise ConfirmationDeclinedError(f"no answer within the call's deadline: {what}; nothing was sent")
        if not answer:
            raise ConfirmationDeclinedError(f"the user declined: {what}; nothing was sent")
        self.accepted = True


def usd(amount: float) -> str:
    """``$0.0351``; a fraction of a cent keeps six decimals, so it never reads as $0.0000."""
    return f"${amount:.4f}" if amount >= 0.01 else f"${amount:.6f}"


def _names(priced: Sequence[Priced]) -> str:
    """``Asking kimi-k2.6``, or for several ``Asking kimi-k2.6 ($0.0100), gpt-5 ($0.2000) and x (no price)``."""
    if len(priced) == 1:
        return f"Asking {priced[0][0]}"
    parts = [f"{name} ({usd(cost)})" if cost is not None else f"{name} (no price)" for name, cost in priced]
    return f"Asking {', '.join(parts[:-1])} and {parts[-1]}"
