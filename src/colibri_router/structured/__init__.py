"""Answers in a JSON Schema's shape (``response_schema``), whatever the provider.

The provider-neutral half of structured output: which form a model gets (registry data,
:mod:`colibri_router.providers.structured`), the caller's schema prepared for it
(:mod:`.transform`), the prompt text a form needs, and, after the answer, validation against the
caller's original schema with one repair turn (:mod:`.repair`). Codecs only render the form's field
(:mod:`colibri_router.wires.output`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from colibri_router.conversation import CompletionRequest, OutputSpec, ToolChoice, ToolSpec
from colibri_router.errors import InvalidRequestError
from colibri_router.providers.profiles import model_segment
from colibri_router.providers.spec import ProviderSpec
from colibri_router.providers.structured import StructuredSupport, family_form
from colibri_router.providers.wires import WIRE_FORMS
from colibri_router.structured.transform import prepare

DEFAULT_NAME = "answer"
TOOL_DESCRIPTION = "Give your answer as this tool's input."

__all__ = ["DEFAULT_NAME", "support_for", "with_output"]


def support_for(provider: ProviderSpec, model: str) -> StructuredSupport:
    """The strongest form ``model`` has on ``provider``: its family's on this wire, else the host's,
    else the wire's."""
    return family_form(model_segment(model), provider.wire) or provider.structured or WIRE_FORMS[provider.wire]


def with_output(
    request: CompletionRequest, schema: Mapping[str, Any], name: str | None, provider: ProviderSpec
) -> tuple[CompletionRequest, list[str]]:
    """``request`` asking for an answer in ``schema``'s shape, in the form the model supports, and what
    that cost in warnings (keywords the form could not send, strict mode given up)."""
    support = support_for(provider, request.model)
    name = name or DEFAULT_NAME
    if _callable_tools(request) and not support.with_tools:
        raise InvalidRequestError(
            f"{request.model} on {provider.name} cannot take tools together with response_schema "
            f"({support.label}); call it without tools, or pick a model that can"
        )
    prepared = prepare(schema, support)
    form = support.form
    warnings: list[str] = []
    if form == "strict_schema" and not prepared.strict:
        form = support.open_objects
        warnings.append(
            "strict mode cannot send this response_schema (an object without closed `properties`, or a root "
            f"that is not an object): sent as {'a forced tool' if form == 'tool' else 'a plain schema'}"
        )
        prepared = prepare(schema, replace(support, form=form))
    instructions: list[str] = []
    if form == "json_mode":
        instructions.append(
            "Answer with only one JSON value, no other text, that is valid for this JSON Schema:\n"
            + json.dumps(schema, separators=(",", ":"))
        )
    lost = prepared.lost_keywords()
    if lost:
        warnings.append(
            f"response_schema keywords {', '.join(lost)} cannot be sent to {request.model} ({support.label}): "
            "stated in the prompt instead"
        )
        instructions.append(
            "The JSON answer must also meet these JSON Schema constraints (path: keywords): "
            + json.dumps(prepared.lost, separators=(",", ":"))
        )
    if form == "tool":
        instructions.append(f"Answer by calling the tool {name} with your answer as its input.")
        request = replace(
            request,
            tools=(*request.tools, ToolSpec(name=name, input_schema=prepared.schema, description=TOOL_DESCRIPTION)),
            tool_choice=ToolChoice(mode="tool", name=name),
        )
    system = "\n\n".join([request.system, *instructions] if request.system else instructions) or None
    return replace(request, system=system, output=OutputSpec(form, name, prepared.schema)), warnings


def _callable_tools(request: CompletionRequest) -> bool:
    """The caller's tools, which the model may call (history tools are declared with tool_choice none)."""
    return bool(request.tools) and not (request.tool_choice is not None and request.tool_choice.mode == "none")
