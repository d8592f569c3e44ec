"""Writes the tools' published schemas (:mod:`.schemas`) from their models:
``uv run python -m colibri_router.server.generate_schemas`` after changing a tool's input or result model."""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel, TypeAdapter

from colibri_router.jobs.model import JobHandle
from colibri_router.schema import ErrorResult
from colibri_router.server.arguments import ARGUMENTS
from colibri_router.server.schemas import SCHEMAS_FILE
from colibri_router.server.table import BY_NAME, TOOLS, load

COMMAND = "uv run python -m colibri_router.server.generate_schemas"
# Tool name → the model of its success object, or a union of them (its failure is an ErrorResult,
# whatever the tool; a long tool may also answer a job handle).
OUTPUTS: dict[str, Any] = {entry.name: load(entry.result) for entry in TOOLS}
# How many levels of properties deep the error object is described: to its fields (code, kind,
# message... and each attempt's), about 900 characters a tool: programs read them from
# structuredContent. A tool's success object is described as deep as its table entry says.
ERROR_LEVELS = 2


def generate() -> dict[str, dict[str, Any]]:
    """Every tool's input and output schema, from its argument and result models."""
    return {
        tool: {
            "input": input_schema(model),
            "output": output_schema(tool),
        }
        for tool, model in ARGUMENTS.items()
    }


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A tool's published input schema: its argument model's, in the form hosts read (see
    :func:`for_hosts`), each definition named shortly."""
    schema = without_null_options(without_titles(model.model_json_schema(by_alias=True)))
    return with_short_names(for_hosts(schema))


# A definition's published name: every reference repeats it, and the host's model knows these shapes
# by their Anthropic names.
SHORT_NAMES = {
    "InputMessage": "Message",
    "TextBlock": "Text",
    "ThinkingBlock": "Thinking",
    "RedactedThinkingBlock": "RedactedThinking",
    "ToolUseBlock": "ToolUse",
    "ToolResultBlock": "ToolResult",
    "MediaBlock": "Media",
    "ToolDefinition": "Tool",
    "NamedToolChoice": "NamedChoice",
}


def with_short_names(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its definitions renamed as :data:`SHORT_NAMES` says, references included."""
    text = json.dumps(schema)
    for name, short in SHORT_NAMES.items():
        text = text.replace(f'"#/$defs/{name}"', f'"#/$defs/{short}"')
    renamed: dict[str, Any] = json.loads(text)
    if "$defs" in renamed:
        renamed["$defs"] = {SHORT_NAMES.get(name, name): spec for name, spec in renamed["$defs"].items()}
    return renamed


def result_schema(tool: str) -> dict[str, Any]:
    """What ``tool`` returns, as its models say it: an object that is its success object or the error
    object every tool answers a failure with. The MCP client of the official TypeScript SDK (Gemini
    CLI's) checks error results against the output schema too, so both shapes are in it; the root is
    an object, as the MCP specification requires of an output schema."""
    either: Any = OUTPUTS[tool] | JobHandle | ErrorResult if BY_NAME[tool].background else OUTPUTS[tool] | ErrorResult
    union: dict[str, Any] = TypeAdapter(either).json_schema()
    return {"type": "object", **without_titles(union)}


def output_schema(tool: str) -> dict[str, Any]:
    """``tool``'s published output schema: :func:`result_schema` in the form a client checks fastest,
    the error object described to :data:`ERROR_LEVELS` levels, the success object to as many as the
    tool's table entry says (router_run's report: its top level, the rest in docs/agent-testing.md)."""
    schema = for_validation(result_schema(tool))
    *successes, error = schema["anyOf"]  # the success object(s), a long tool's job handle, the error
    entry = BY_NAME[tool]
    if entry.result_levels is not None:
        successes = [collapsed(success, entry.result_levels) for success in successes]
    if not entry.result_descriptions:
        successes = [without_descriptions(success) for success in successes]
    schema["anyOf"] = [*successes, collapsed(error, ERROR_LEVELS)]
    return schema


def without_descriptions(schema: Any) -> Any:
    """``schema`` without the descriptions of its properties (a property named ``description`` stays)."""
    if isinstance(schema, list):
        return [without_descriptions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: {name: without_descriptions(spec) for name, spec in value.items()}
        if key == "properties" and isinstance(value, dict)
        else without_descriptions(value)
        for key, value in schema.items()
        if key != "description"
    }


def collapsed(schema: Any, levels: int) -> Any:
    """``schema`` with every object or array nested deeper than ``levels`` levels of properties reduced
    to its type and description: it accepts all that ``schema`` accepts, and checks the outer levels."""
    if not isinstance(schema, dict):
        return schema
    if levels == 0 and "anyOf" in schema:
        kept = {key: schema[key] for key in ("type", "description") if key in schema}
        return {**kept, "anyOf": [collapsed(option, 0) for option in schema["anyOf"]]}
    if levels == 0 and ({"properties", "items", "additionalProperties"} & schema.keys()):
        return {key: schema[key] for key in ("type", "description") if key in schema}
    out = dict(schema)
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {name: collapsed(spec, levels - 1) for name, spec in schema["properties"].items()}
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = collapsed(schema["additionalProperties"], levels - 1)
    if "items" in schema:
        out["items"] = collapsed(schema["items"], levels)
    if "anyOf" in schema:
        out["anyOf"] = [collapsed(option, levels) for option in schema["anyOf"]]
    return out


def without_titles(schema: Any) -> Any:
    """``schema`` without the ``title`` pydantic gives every property and model ("Max Tokens" for
    ``max_tokens``): the names say it already, and the host's model reads tools/list on every turn
    (about 3,000 characters of it were titles). A property named ``title`` stays."""
    if isinstance(schema, list):
        return [without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: {name: without_titles(spec) for name, spec in value.items()}
        if key == "properties" and isinstance(value, dict)
        else without_titles(value)
        for key, value in schema.items()
        if key != "title"
    }


# Keywords left out of input schemas (→ the one value left out, ... for any): the server checks its
# arguments with the models, so these only cost the host's model words. A string must not be empty:
# a model sends none, and the server's message says so if one does.
_NOT_FOR_HOSTS: dict[str, Any] = {"discriminator": ..., "additionalProperties": True, "minLength": 1}


def for_hosts(schema: Any) -> Any:
    """An input schema in the words every host reads alike, and shorter: a discriminated union
    (pydantic's ``oneOf`` with an OpenAPI ``discriminator``, which no JSON Schema validator reads and
    Codex drops with its branches) is an ``anyOf`` of its branches, each of which names its ``type``;
    an open object leaves out ``additionalProperties: true``, which JSON Schema assumes, and a string
    ``minLength: 1`` (see :data:`_NOT_FOR_HOSTS`). Codex strips
    every description from a tool whose input schema is over 5,000 bytes: a test keeps each under."""
    if isinstance(schema, list):
        return [for_hosts(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: for_hosts(spec) for name, spec in value.items()}
        elif key == "oneOf":
            out["anyOf"] = for_hosts(value)
        elif key not in _NOT_FOR_HOSTS or _NOT_FOR_HOSTS[key] not in (..., value):
            out[key] = for_hosts(value)
    return out


def without_null_options(schema: Any) -> Any:
    """An input schema whose optional fields are just not required: ``anyOf: [X, null]`` with
    ``default: null`` becomes X. The server still accepts an explicit null; the host's model is
    only spared reading "or null" on every optional field of every tool, on every turn. Results keep
    their nulls: a client checks each result against its output schema."""
    if isinstance(schema, list):
        return [without_null_options(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: without_null_options(value) for key, value in schema.items()}
    options = out.get("anyOf")
    if out.get("default", ...) is None and isinstance(options, list) and {"type": "null"} in options:
        del out["default"]
        kept = [option for option in options if option != {"type": "null"}]
        del out["anyOf"]
        out = {**kept[0], **out} if len(kept) == 1 else {"anyOf": kept, **out}
    return out


# Keywords after which ``[T, "null"]`` would no longer accept null (an enum without it, a constant).
_NOT_MERGEABLE = frozenset({"enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref"})


def for_validation(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema with the same meaning in the form a client checks fastest: each ``$ref``
    replaced by the definition it names, and ``anyOf: [{"type": T, ...}, {"type": "null"}]`` written
    as ``"type": [T, "null"]``. The official client checks every result against the output schema
    in Python: resolving references and trying each branch of an ``anyOf`` was half of it (a
    router_call result: 160 µs, 85 µs in this form)."""
    definitions = schema.get("$defs", {})
    inlined: dict[str, Any] = _inlined({key: value for key, value in schema.items() if key != "$defs"}, definitions, ())
    return inlined


def _inlined(schema: Any, definitions: dict[str, Any], expanding: tuple[str, ...]) -> Any:
    if isinstance(schema, list):
        return [_inlined(item, definitions, expanding) for item in schema]
    if not isinstance(schema, dict):
        return schema
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        name = reference.removeprefix("#/$defs/")
        if name in expanding:
            raise ValueError(f"{name} refers to itself: a recursive result cannot be inlined")
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        return {**_inlined(definitions[name], definitions, (*expanding, name)), **rest}
    out = {key: _inlined(value, definitions, expanding) for key, value in schema.items()}
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = options[0] if options[1] == {"type": "null"} else options[1]
        if isinstance(other.get("type"), str) and not _NOT_MERGEABLE & other.keys():
            del out["anyOf"]
            out = {**other, **out, "type": [other["type"], "null"]}
    return out


def render() -> str:
    """The file's text: one space of indentation keeps it reviewable in a diff and small on disk."""
    return json.dumps(generate(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMAS_FILE.write_text(render(), encoding="utf-8")
    sys.stderr.write(f"wrote {SCHEMAS_FILE}\n")  # stdout is never ours to write in this package
