"""What a provider is, as data: a registry entry (:class:`ProviderSpec`) and its host quirks.

A provider is a wire (the codec family it speaks) plus where it lives, where its key comes from,
and how its host deviates from the wire's reference service. Adding an OpenAI-compatible host is one
entry; nothing above the codecs ever branches on a provider's name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from colibri_router.providers.agent_cli import AgentCli
from colibri_router.providers.phrases import GENERIC, Phrases
from colibri_router.providers.structured import StructuredSupport
from colibri_router.providers.wires import SUBSCRIPTION_WIRES, WIRE_NAMES, WireName

__all__ = ["SUBSCRIPTION_WIRES", "WIRE_NAMES", "HostQuirks", "ProviderSpec", "WireName", "error_prefix"]

MaxTokensField: TypeAlias = Literal["max_tokens", "max_completion_tokens"]
ReasoningField: TypeAlias = Literal["reasoning_content", "reasoning"]
ReasoningControl: TypeAlias = Literal["reasoning_effort", "openrouter", "none"]


@dataclass(frozen=True, slots=True)
class HostQuirks:
    """How a host deviates from its wire's reference service (docs/providers.md, Host rules).

    ``max_tokens_field`` None follows the model (OpenAI reasoning models want ``max_completion_tokens``
    wherever they are served); a host that accepts only one name says which.
    """

    max_tokens_field: MaxTokensField | None = None
    include_usage: bool = False  # send stream_options.include_usage (usage otherwise never arrives)
    reasoning_field: ReasoningField = "reasoning_content"  # the field reasoning is replayed in
    max_temperature: float = 2.0
    documented_fields_only: bool = False  # unknown request fields are a 422 (Mistral)
    required_tool_choice: str = "required"  # the wire value for "call some tool" (Mistral: "any")
    none_drops_tools: bool = False  # tool_choice none is sent as "no tools" (Mistral garbles otherwise)
    no_user_after_tool: bool = False  # a user message may not follow a tool message (Mistral)
    reasoning_control: ReasoningControl = "reasoning_effort"  # how `reasoning` is asked for


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """A registry entry. Keys are read at call time from the first set variable of ``key_envs`` (several,
    comma-separated, form a pool: docs/keys.md)."""

    name: str
    wire: WireName
    base_url: str
    base_url_env: str
    key_envs: tuple[str, ...] = ()
    key_required: bool = True
    # True: the keys of every set variable of ``key_envs`` form one pool (a config entry naming several);
    # False: the first set variable's keys (built-ins list alternative names of one variable).
    pool_key_envs: bool = False
    # The shape of its API keys (a regex, searched case-sensitively): text of this shape is redacted from
    # files, errors and logs even when the key is not this machine's (None: no shape of its own).
    key_pattern: str | None = None
    default_model: str | None = None
    claims: tuple[str, ...] = ()  # regexes (full match, case-insensitive) of model names it serves
    models: tuple[str, ...] = ()  # model names it claims exactly (a config entry's `models`)
    headers: Mapping[str, str] = field(default_factory=dict)
    quirks: HostQuirks = field(default_factory=HostQuirks)
    price_provider: str | None = None  # genai-prices' provider id
    local: bool = False  # runs on the user's machine: costs nothing
    tools: bool = True  # whether its models take tool definitions
    builtin: bool = True
    code_prefix: str = ""  # error codes: <PREFIX>_API_ERROR...; derived from the name when empty
    # Conditions it marks only in message text (read by engine/classify.py).
    error_phrases: Phrases = field(default_factory=lambda: GENERIC)
    agent: AgentCli | None = None  # the command line of an `agent-cli` provider
    structured: StructuredSupport | None = None  # its structured-output form; None: its wire's default

    @property
    def subscription(self) -> bool:
        """Reached without an HTTP API key: a command-line agent or the host's model."""
        return self.wire in SUBSCRIPTION_WIRES

    @property
    def error_prefix(self) -> str:
        return self.code_prefix or error_prefix(self.name)

    def claims_model(self, model: str) -> bool:
        return model in self.models or any(re.fullmatch(p, model, re.IGNORECASE) for p in self.claims)


def error_prefix(name: str) -> str:
    """``gpu-box`` → ``GPU_BOX``: the registry name upper-cased, every non-alphanumeric turned into ``_``."""
    return re.sub(r"[^A-Z0-9]", "_", name.upper())
