"""Writes the tools' published schemas (:mod:`.schemas`) from their models:
``uv run python -m colibri_router.server.generate_schemas`` after changing a tool's input or result model."""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel

from colibri_router.schema import RouterCallResult
from colibri_router.schema_many import RouterAskManyResult
from colibri_router.schema_tools import RouterModelsResult, RouterThreadsResult, RouterUsageResult
from colibri_router.server.arguments import ARGUMENTS
from colibri_router.server.schemas import SCHEMAS_FILE

COMMAND = "uv run python -m colibri_router.server.generate_schemas"
# Tool name → its result model; router_run answers a report whose shape depends on the scenario.
OUTPUTS: dict[str, type[BaseModel]] = {
    "router_call": RouterCallResult,
    "router_ask_many": RouterAskManyResult,
    "router_models": RouterModelsResult,
    "router_threads": RouterThreadsResult,
    "router_usage": RouterUsageResult,
}


def generate() -> dict[str, dict[str, Any]]:
    """Every tool's input and output schema, from its argument and result models."""
    return {
        tool: {
            "input": without_null_options(without_titles(model.model_json_schema(by_alias=True))),
            "output": for_validation(without_titles(OUTPUTS[tool].model_json_schema())) if tool in OUTPUTS else None,
        }
        for tool, model in ARGUMENTS.items()
    }


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
