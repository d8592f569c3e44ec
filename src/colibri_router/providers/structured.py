"""Structured output as registry data: the strongest form each wire, host and model family supports,
each fact with its source (docs/structured-output.md is the table a reader sees).

A form is how a request asks for an answer in a JSON Schema's shape:

- ``strict_schema``: the service constrains decoding to the schema, which must first be made strict
  (every property required, optionals nullable, objects closed; :mod:`colibri_router.structured.transform`);
- ``schema``: the service takes the schema as it is (best effort or constrained, its own subset);
- ``json_mode``: the service only promises a JSON object; the schema goes into the system prompt;
- ``tool``: one forced tool whose input schema is the schema; its arguments are the answer.

Every form is validated on our side against the caller's original schema, whatever it promised.
A host's entry (:attr:`ProviderSpec.structured`) overrides its wire's default (its record in
:mod:`colibri_router.providers.wires`); a model family's entry
(:data:`FAMILY_FORMS`, chosen by the model's last name segment on one wire) overrides both. Data
only: the codecs render a form, the router never asks which provider it holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeAlias

OutputForm: TypeAlias = Literal["strict_schema", "schema", "json_mode", "tool"]
FORM_LABELS: Mapping[OutputForm, str] = MappingProxyType(
    {
        "strict_schema": "native strict schema",
        "schema": "native schema",
        "json_mode": "JSON mode + schema in the prompt",
        "tool": "forced tool",
    }
)

# Keywords OpenAI's strict mode refuses (https://platform.openai.com/docs/guides/structured-outputs,
# "Supported schemas"): composition it cannot constrain, and object/array/string bounds it ignores.
OPENAI_STRICT_UNSUPPORTED = frozenset(
    {
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "minLength",
        "maxLength",
        "default",
        "examples",
    }
)
# Anthropic's structured outputs (https://docs.claude.com/en/docs/build-with-claude/structured-outputs,
# "JSON Schema limitations"): no numeric or string bounds, objects closed.
ANTHROPIC_UNSUPPORTED = frozenset(
    {
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "uniqueItems",
        "contains",
    }
)
# Gemini's responseJsonSchema takes only these keywords (https://ai.google.dev/gemini-api/docs/structured-output,
# "JSON Schema support"); anything else is moved into the prompt.
GEMINI_KEYWORDS = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    }
)


@dataclass(frozen=True, slots=True)
class StructuredSupport:
    """One fact: the form a wire, host or model family supports, and what goes with it.

    ``unsupported``: keywords the form cannot send (removed, then named in the prompt and a warning);
    ``allowed``: when set, the only keywords it can send. ``with_tools``: whether the request may also
    carry the caller's tools. ``streaming``: whether the answer streams under this form.
    """

    form: OutputForm
    source: str
    unsupported: frozenset[str] = frozenset()
    allowed: frozenset[str] | None = None
    with_tools: bool = True
    streaming: bool = True
    # Hosts that refuse json_object unless a message says "json" (DeepSeek); ours always does.
    says_json: bool = False
    # The form a schema with an open object goes as, when this one is a strict form that must close them.
    open_objects: OutputForm = "schema"

    @property
    def label(self) -> str:
        return FORM_LABELS[self.form]


OPENAI_STRICT = StructuredSupport(
    "strict_schema",
    "https://platform.openai.com/docs/guides/structured-outputs (response_format json_schema, strict)",
    unsupported=OPENAI_STRICT_UNSUPPORTED,
)
# The wire's default for an OpenAI-compatible server we know nothing about: JSON mode is the widest form.
OPENAI_JSON_MODE = StructuredSupport(
    "json_mode",
    "https://platform.openai.com/docs/api-reference/chat/create (response_format json_object)",
    says_json=True,
)
ANTHROPIC_NATIVE = StructuredSupport(
    "strict_schema",
    "https://docs.claude.com/en/docs/build-with-claude/structured-outputs (output_config.format)",
    unsupported=ANTHROPIC_UNSUPPORTED,
    open_objects="tool",  # every object must be closed there: an open one goes as a forced tool
)
ANTHROPIC_TOOL = StructuredSupport(
    "tool",
    "https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use (forced tool_choice)",
    with_tools=False,
)
GEMINI_SCHEMA = StructuredSupport(
    "schema",
    "https://ai.google.dev/gemini-api/docs/structured-output (responseMimeType + responseJsonSchema)",
    allowed=GEMINI_KEYWORDS,
    with_tools=False,
)
COHERE_SCHEMA = StructuredSupport(
    "schema",
    "https://docs.cohere.com/docs/structured-outputs (response_format json_object with json_schema)",
    unsupported=frozenset({"allOf", "not", "if", "then", "else", "patternProperties", "unevaluatedProperties"}),
    with_tools=False,
)
OLLAMA_SCHEMA = StructuredSupport("schema", "https://ollama.com/blog/structured-outputs (format: <JSON Schema>)")

# What a command-line agent or the host's model gets: no request field at all, only the prompt.
PROMPT_ONLY = StructuredSupport("json_mode", "the schema in the prompt; the answer validated here")


@dataclass(frozen=True, slots=True)
class FamilyForm:
    """A model family's own form on one wire: ``pattern`` full-matches the model's last name segment."""

    pattern: str
    wire: str
    support: StructuredSupport
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern, re.IGNORECASE))


_OPENAI_MODELS = "https://platform.openai.com/docs/guides/structured-outputs (gpt-4o-2024-08-06 and later)"
# First match wins.
FAMILY_FORMS: tuple[FamilyForm, ...] = (
    # Claude models before the 4.5 generation (and Opus 4) have no output_config.format: a forced tool.
    FamilyForm(
        r"claude-(?:3|instant|2|opus-4-0|opus-4-2|sonnet-4-0|sonnet-4-2).*|claude-(?:opus|sonnet)-4(?:-\d{8})?",
        "anthropic",
        StructuredSupport(
            "tool",
            "https://docs.claude.com/en/docs/build-with-claude/structured-outputs (Sonnet 4.5, Opus 4.1+, "
            "Haiku 4.5 and later)",
            with_tools=False,
        ),
    ),
    # Kimi served on an Anthropic-shaped endpoint: Moonshot documents no output_config there.
    FamilyForm(
        r"(?:moonshot(?:ai)?\.)?kimi.*",
        "anthropic",
        StructuredSupport(
            "tool", "https://platform.moonshot.ai/docs/guide/agent-support (Anthropic-compatible API)", with_tools=False
        ),
    ),
    # OpenAI models older than gpt-4o-2024-08-06 take only json_object.
    FamilyForm(
        r"gpt-3\.5.*|gpt-4(?:-\d{4}.*|-turbo.*|-32k.*)?|gpt-4o-2024-05-13",
        "openai",
        StructuredSupport("json_mode", _OPENAI_MODELS),
    ),
    # Gemini 3 takes a response schema together with function declarations.
    FamilyForm(
        r"(?:models/)?gemini-[3-9].*",
        "gemini",
        StructuredSupport(
            "schema",
            "https://ai.google.dev/gemini-api/docs/structured-output (Gemini 3: structured output with tools)",
            allowed=GEMINI_KEYWORDS,
        ),
    ),
)


def family_form(model_segment: str, wire: str) -> StructuredSupport | None:
    """The model family's own form on ``wire``, or None to follow the host."""
    for entry in FAMILY_FORMS:
        if entry.wire == wire and entry.compiled.fullmatch(model_segment):
            return entry.support
    return None
