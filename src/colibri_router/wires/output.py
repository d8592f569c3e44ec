"""Each wire's field for an answer in a JSON Schema's shape (:class:`~colibri_router.conversation.OutputSpec`).

Pure renderers, one per wire, called by the codecs. The form was chosen from the registry and the
schema already prepared for it (:mod:`colibri_router.structured`); a forced tool (form ``tool``) is an
ordinary tool and tool_choice by then, so no wire renders anything for it here.
"""

from __future__ import annotations

from typing import Any

from colibri_router.conversation import OutputSpec


def openai_response_format(output: OutputSpec) -> dict[str, Any] | None:
    """``response_format`` of the chat-completions wire: json_schema (strict or not), or json_object."""
    if output.form == "json_mode":
        return {"type": "json_object"}
    if output.form == "tool":
        return None
    spec: dict[str, Any] = {"name": output.name, "schema": dict(output.schema)}
    if output.form == "strict_schema":
        spec["strict"] = True
    return {"type": "json_schema", "json_schema": spec}


def anthropic_output_config(output: OutputSpec) -> dict[str, Any] | None:
    """Anthropic's ``output_config.format`` (generally available: no beta header)."""
    if output.form in ("strict_schema", "schema"):
        return {"format": {"type": "json_schema", "schema": dict(output.schema)}}
    return None


def gemini_generation(output: OutputSpec) -> dict[str, Any]:
    """Gemini's generationConfig fields: JSON out, and the schema in ``responseJsonSchema``."""
    if output.form == "tool":
        return {}
    fields: dict[str, Any] = {"responseMimeType": "application/json"}
    if output.form != "json_mode":
        fields["responseJsonSchema"] = dict(output.schema)
    return fields


def cohere_response_format(output: OutputSpec) -> dict[str, Any] | None:
    """Cohere v2's ``response_format``: a JSON object, with its schema when the form sends one."""
    if output.form == "tool":
        return None
    if output.form == "json_mode":
        return {"type": "json_object"}
    return {"type": "json_object", "json_schema": dict(output.schema)}


def ollama_format(output: OutputSpec) -> str | dict[str, Any] | None:
    """Ollama's ``format``: a JSON Schema, or ``"json"``."""
    if output.form == "tool":
        return None
    return "json" if output.form == "json_mode" else dict(output.schema)
