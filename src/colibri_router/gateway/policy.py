"""The policy file (``COLIBRI_HTTP_POLICY``): what each member of a team server may use, and how fast.

A TOML file with a ``[defaults]`` table and one ``[members.NAME]`` table per member whose rules differ
(NAME is a token's name in ``COLIBRI_HTTP_TOKENS_FILE``). A member's rules are the defaults with its
own keys on top; a key absent from both leaves that rule open. Keys:

    providers              provider names or glob patterns it may call
    models                 model names or glob patterns (matched after aliases are resolved)
    tools                  colibri tool names it may call (and sees in tools/list)
    files                  whether router_call's ``files`` may read (within COLIBRI_HTTP_FILES_ROOT)
    agent_cli              whether the command-line agents may run for it
    max_cost_usd_per_call  the most one model's request may cost at worst
    daily_usd, monthly_usd its own budgets (UTC day and month)
    rpm, tpm               tool calls and tokens per minute (a sliding minute)

An unknown key or table, or a value of the wrong type, makes the whole file invalid: the error names it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, fields, replace
from typing import Any

from colibri_router.errors import ConfigError
from colibri_router.tokens import NAME_PATTERN

_LISTS = ("providers", "models", "tools")
_FLAGS = ("files", "agent_cli")
_AMOUNTS = ("max_cost_usd_per_call", "daily_usd", "monthly_usd")
_COUNTS = ("rpm", "tpm")
KEYS = (*_LISTS, *_FLAGS, *_AMOUNTS, *_COUNTS)


@dataclass(frozen=True, slots=True)
class Rules:
    """One member's rules; None: that rule is open."""

    providers: tuple[str, ...] | None = None
    models: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    files: bool = True
    agent_cli: bool = True
    max_cost_usd_per_call: float | None = None
    daily_usd: float | None = None
    monthly_usd: float | None = None
    rpm: int | None = None
    tpm: int | None = None

    def allows_provider(self, name: str) -> bool:
        return self.providers is None or _matches(self.providers, name)

    def allows_model(self, provider: str, model: str) -> bool:
        """``model`` as placed (an alias already resolved); a pattern with a colon is matched against
        ``provider:model`` instead (``openai:gpt-4o``: that model at that provider only)."""
        if self.models is None:
            return True
        qualified = f"{provider}:{model}"
        return any(fnmatch.fnmatchcase(qualified if ":" in pattern else model, pattern) for pattern in self.models)

    def allows_tool(self, name: str) -> bool:
        return self.tools is None or _matches(self.tools, name)

    @property
    def limits_rate(self) -> bool:
        return self.rpm is not None or self.tpm is not None


def _matches(patterns: tuple[str, ...], name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


@dataclass(frozen=True, slots=True)
class Policy:
    """The whole file: the defaults, and each named member's own keys over them."""

    defaults: Rules
    members: dict[str, Rules]

    def rules_for(self, member: str) -> Rules:
        return self.members.get(member, self.defaults)


OPEN = Policy(Rules(), {})


def parse_policy(text: str, source: str) -> Policy:
    """The policy ``text`` (read from ``source``) holds; a :class:`ConfigError` names what is wrong."""
    import tomllib  # here, not at start-up: the MCP shell imports this module before any call

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"policy file {source}: not valid TOML: {error}") from None
    _no_unknown(document, ("defaults", "members"), f"policy file {source}", "table")
    defaults_table = _table(document.get("defaults", {}), f"policy file {source}: [defaults]")
    defaults = _rules(Rules(), defaults_table, f"policy file {source}: [defaults]")
    members: dict[str, Rules] = {}
    for name, table in _table(document.get("members", {}), f"policy file {source}: [members]").items():
        where = f"policy file {source}: [members.{name}]"
        if not NAME_PATTERN.fullmatch(name):
            raise ConfigError(f"{where}: not a token name (letters, digits and . _ @ + -)")
        members[name] = _rules(defaults, _table(table, where), where)
    return Policy(defaults, members)


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table")
    return value


def _no_unknown(table: dict[str, Any], known: tuple[str, ...], where: str, what: str) -> None:
    unknown = [key for key in table if key not in known]
    if unknown:
        raise ConfigError(
            f"{where}: unknown {what}{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)} "
            f"(known: {', '.join(known)})"
        )


def _rules(base: Rules, table: dict[str, Any], where: str) -> Rules:
    """``base`` with the keys of ``table`` on top, each checked for its type."""
    _no_unknown(table, KEYS, where, "key")
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key in _LISTS:
            if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
                raise ConfigError(f"{where}: {key} must be a list of names or patterns")
            values[key] = tuple(value)
        elif key in _FLAGS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: {key} must be true or false")
            values[key] = value
        elif key in _AMOUNTS:
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"{where}: {key} must be a number of US dollars, 0 or more")
            values[key] = float(value)
        else:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{where}: {key} must be a whole number, 1 or more")
            values[key] = value
    return replace(base, **values)


def describe(rules: Rules) -> dict[str, Any]:
    """The rules as the policy file writes them (open rules left out), for doctor and logs."""
    described: dict[str, Any] = {}
    for item in fields(rules):
        value = getattr(rules, item.name)
        if item.name in _FLAGS:
            if value is False:
                described[item.name] = False
        elif value is not None:
            described[item.name] = list(value) if isinstance(value, tuple) else value
    return described
