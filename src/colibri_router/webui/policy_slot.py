"""Where the members page shows each member's policy (which providers, models and tools they may
use, and how fast: issue 37, part 1, ``COLIBRI_HTTP_POLICY``).

That policy is being built separately; until it is merged there is none, and this returns no rules,
which the page shows as "none: every provider, model and tool". When it lands, this function reads
the member's effective policy and returns its rules as (rule, value) pairs, e.g. ``("models",
"kimi*")`` or ``("rpm", "10")``; the page needs no other change."""

from __future__ import annotations


def member_policy(name: str) -> list[tuple[str, str]]:
    """The policy rules that apply to ``name``, as (rule, value) text pairs; none yet."""
    del name  # the per-member policy does not exist in this version
    return []
