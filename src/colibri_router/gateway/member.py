"""The member a call runs for on a team server: its name and the rules the policy file gives it,
held in a context variable for the call's whole task tree (:func:`acting_for`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from colibri_router.gateway.policy import Rules

__all__ = ["Member", "acting_for", "current_member"]


@dataclass(frozen=True, slots=True)
class Member:
    """A caller of the team server and the rules the policy file gives them."""

    name: str
    rules: Rules


_MEMBER: ContextVar[Member | None] = ContextVar("colibri_member", default=None)


def current_member() -> Member | None:
    """The member the running call is made for; None when no policy applies (stdio, no file)."""
    return _MEMBER.get()


@contextlib.contextmanager
def acting_for(member: Member | None) -> Iterator[None]:
    token = _MEMBER.set(member)
    try:
        yield
    finally:
        _MEMBER.reset(token)
