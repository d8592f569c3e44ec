"""Each member's policy as the members page shows it: the rules of ``COLIBRI_HTTP_POLICY`` that apply to
the member (:mod:`colibri_router.gateway`), as the file writes them, open rules left out."""

from __future__ import annotations

from colibri_router.gateway.loader import current_policy
from colibri_router.gateway.policy import describe
from colibri_router.settings import load_settings


def member_policy(name: str) -> list[tuple[str, str]]:
    """The policy rules that apply to ``name``, as (rule, value) text pairs; none without a policy."""
    rules = describe(current_policy(load_settings()).rules_for(name))
    return [(rule, _text(value)) for rule, value in rules.items()]


def _text(value: object) -> str:
    """A rule's value as the policy file writes it: lists joined, booleans in TOML's lower case."""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else str(value)
