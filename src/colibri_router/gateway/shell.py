"""The policy at the MCP shell of ``serve --http``: who the member is, the tools they see and may
call, ``files``, and ``rpm`` (each tool call counts one), checked before a tool's service runs.

A request over HTTP with ``COLIBRI_HTTP_POLICY`` set is made for the member its token names; every
other request (stdio, no policy file) has no member and nothing here costs more than a settings read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from colibri_router.errors import ColibriError
from colibri_router.gateway.errors import NotAllowedError
from colibri_router.gateway.loader import current_policy
from colibri_router.gateway.member import Member
from colibri_router.settings import load_settings


def member_of_request(name: str | None) -> Member | None:
    """The member a request from the token ``name`` is made for (None: not over HTTP, where no policy
    applies), under the policy in force now; None without a policy. A policy file that never parsed
    raises its ``ConfigError``."""
    if name is None:
        return None
    settings = load_settings()
    if settings.http_policy is None:
        return None
    return Member(name, current_policy(settings).rules_for(name))


async def admit_tool(member: Member, tool: str, arguments: Any) -> None:
    """Refuse a tool call the member's policy forbids (``NOT_ALLOWED``) or that is over their ``rpm``
    (``POLICY_RATE_LIMITED``). ``arguments`` that failed their model are not counted."""
    rules = member.rules
    if not rules.allows_tool(tool):
        raise NotAllowedError(f"tool {tool!r} is not allowed by the policy of {member.name!r}")
    if isinstance(arguments, ColibriError):
        return
    if not rules.files and getattr(arguments, "files", None):
        raise NotAllowedError(f"`files` is not allowed by the policy of {member.name!r} (files = false)")
    if rules.rpm is not None:
        # The limiter counts in the store: loaded by a member's first call with rpm, not at start-up.
        from colibri_router.gateway import limiter

        await limiter.take(member, calls=1, tokens=0)


def visible_tools(names: Sequence[str], caller: str | None) -> set[str]:
    """The tools of ``names`` the member ``caller`` may see (every one without a policy, or with no
    caller: not over HTTP)."""
    member = member_of_request(caller)
    return set(names) if member is None else {name for name in names if member.rules.allows_tool(name)}
