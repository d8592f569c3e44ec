"""Structured-output request rules, as the real services enforce them (each function returns Problems).

- OpenAI-wire ``response_format``: a strict json_schema must close every object (``additionalProperties:
  false``) and require every property, and refuses keywords strict mode does not support; ``json_object``
  is refused unless some message says "json" (OpenAI's and DeepSeek's documented rule); LM Studio takes
  only ``json_schema``.
- Anthropic: ``output_format`` (the beta field) needs the ``structured-outputs-2025-11-13`` beta header;
  ``output_config.format`` needs closed objects and refuses numeric and string bounds.
- Gemini: ``responseJsonSchema`` needs ``responseMimeType: application/json`` and takes only its keyword
  subset.
- Cohere: ``response_format`` cannot be combined with tools.

Kept independent of the router's own tables on purpose: a test passes only when the request is right.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from .routes import Problem, lower_keys

_STRICT_REFUSED = frozenset(
    {"allOf", "not", "if", "then", "else", "patternProperties", "minLength", "maxLength", "uniqueItems", "oneOf"}
)
_ANTHROPIC_REFUSED = frozenset({"minimum", "maximum", "minLength", "maxLength", "multipleOf", "allOf", "not"})
_GEMINI_KEYWORDS = frozenset(
    {
        "$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum", "items",
        "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf", "properties",
        "additionalProperties", "required", "propertyOrdering",
    }
)  # fmt: skip
ANTHROPIC_BETA = "structured-outputs-2025-11-13"


def _subschemas(schema: Any, path: str = "schema") -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in ("items", "additionalProperties", "not"):
        yield from _subschemas(schema.get(key), f"{path}.{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(schema.get(key) or []):
            yield from _subschemas(sub, f"{path}.{key}[{i}]")
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (schema.get(key) or {}).items():
            yield from _subschemas(sub, f"{path}.{key}.{name}")


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema


def _says_json(messages: Any) -> bool:
    return "json" in json.dumps(messages).lower()


def openai_response_format_problems(body: Mapping[str, Any], *, host: str) -> list[Problem]:
    spec = body.get("response_format")
    if spec is None:
        return []
    kind = spec.get("type") if isinstance(spec, dict) else None
    if host == "lmstudio" and kind != "json_schema":
        return [Problem("'response_format.type' must be 'json_schema'", param="response_format")]
    if kind == "json_object":
        if not _says_json(body.get("messages")):
            return [
                Problem(
                    "'messages' must contain the word 'json' in some form, to use 'response_format' of type "
                    "'json_object'.",
                    param="messages",
                    error_type="invalid_request_error",
                )
            ]
        return []
    if kind != "json_schema":
        return [Problem(f"Invalid value: {kind!r}. Supported values are: 'text', 'json_object' and 'json_schema'.")]
    json_schema = spec.get("json_schema")
    if not isinstance(json_schema, dict) or not isinstance(json_schema.get("name"), str):
        return [Problem("Missing required parameter: 'response_format.json_schema.name'.")]
    if json_schema.get("strict") is True:
        return strict_schema_problems(json_schema.get("schema"), json_schema["name"])
    return []


def strict_schema_problems(schema: Any, name: str) -> list[Problem]:
    """OpenAI's strict-mode checks of a schema, messages as OpenAI words them."""
    problems = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [
            Problem(f"Invalid schema for response_format '{name}': schema must be a JSON Schema of 'type: \"object\"'")
        ]
    for path, sub in _subschemas(schema):
        for keyword in sorted(_STRICT_REFUSED & set(sub)):
            problems.append(
                Problem(
                    f"Invalid schema for response_format '{name}': In context={path}, '{keyword}' is not permitted."
                )
            )
        if not _is_object(sub):
            continue
        if sub.get("additionalProperties") is not False:
            problems.append(
                Problem(
                    f"Invalid schema for response_format '{name}': In context={path}, 'additionalProperties' is "
                    "required to be supplied and to be false."
                )
            )
        missing = [key for key in sub.get("properties", {}) if key not in (sub.get("required") or [])]
        if missing:
            problems.append(
                Problem(
                    f"Invalid schema for response_format '{name}': In context={path}, 'required' is required to be "
                    f"supplied and to be an array including every key in properties. Missing '{missing[0]}'."
                )
            )
    return problems


def anthropic_output_problems(body: Mapping[str, Any], headers: Mapping[str, str] | None) -> list[Problem]:
    problems = []
    if "output_format" in body:
        beta = lower_keys(headers or {}).get("anthropic-beta", "")
        if ANTHROPIC_BETA not in beta:
            problems.append(
                Problem(
                    "output_format: Extra inputs are not permitted (the structured-outputs beta header is required)",
                    error_type="invalid_request_error",
                )
            )
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else None
    if fmt is None:
        return problems
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
        return [*problems, Problem("output_config.format: must be {type: json_schema, schema}")]
    for path, sub in _subschemas(fmt["schema"], "output_config.format.schema"):
        for keyword in sorted(_ANTHROPIC_REFUSED & set(sub)):
            problems.append(Problem(f"{path}: keyword '{keyword}' is not supported in structured outputs"))
        if _is_object(sub) and sub.get("additionalProperties") is not False:
            problems.append(
                Problem(f"{path}: For 'object' type, 'additionalProperties' must be explicitly set to false")
            )
    return problems


def gemini_output_problems(config: Mapping[str, Any]) -> list[Problem]:
    schema = config.get("responseJsonSchema")
    if schema is None:
        return []
    problems = []
    if config.get("responseMimeType") != "application/json":
        problems.append(
            Problem(
                "* GenerationConfig.response_mime_type: responseJsonSchema requires response_mime_type "
                "'application/json'",
                error_type="INVALID_ARGUMENT",
            )
        )
    for path, sub in _subschemas(schema, "responseJsonSchema"):
        for keyword in sorted(set(sub) - _GEMINI_KEYWORDS):
            problems.append(
                Problem(
                    f"Invalid JSON payload received. Unknown name \"{keyword}\" at '{path}'",
                    error_type="INVALID_ARGUMENT",
                )
            )
    return problems


def cohere_output_problems(body: Mapping[str, Any]) -> list[Problem]:
    spec = body.get("response_format")
    if spec is None:
        return []
    if not isinstance(spec, dict) or spec.get("type") not in ("text", "json_object"):
        return [Problem("invalid request: response_format.type must be text or json_object")]
    if body.get("tools"):
        return [Problem("invalid request: response_format is not supported with tools")]
    return []
