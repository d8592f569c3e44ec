"""Every tool's input schema, as tools/list serves it, is one Codex keeps whole (issue 31 §2).

Codex strips every parameter description from a tool whose input schema is over 5,000 bytes of compact
JSON (its default ``tool_input_schema_max_bytes``), and sends a property without a type as ``{}``.
The schemas are measured as served: router_call's with the enum of the built-in providers' names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from colibri_router.providers import provider_names
from colibri_router.server import build_server
from colibri_router.server.generate_schemas import for_hosts

CODEX_SCHEMA_LIMIT = 5_000  # bytes of compact JSON


def compact_size(schema: dict[str, Any]) -> int:
    return len(json.dumps(schema, separators=(",", ":")).encode())


async def _served() -> dict[str, dict[str, Any]]:
    async with Client(build_server()) as client:
        return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}


async def test_every_input_schema_as_served_is_within_codexs_limit() -> None:
    served = await _served()
    assert served["router_call"]["properties"]["provider"]["enum"] == list(provider_names())
    for tool, schema in served.items():
        print(f"{tool}: {compact_size(schema)} bytes of compact JSON (limit {CODEX_SCHEMA_LIMIT})")
    over = {tool: compact_size(schema) for tool, schema in served.items() if compact_size(schema) > CODEX_SCHEMA_LIMIT}
    assert over == {}


async def test_every_top_level_parameter_keeps_its_description() -> None:
    """The limit is met with the descriptions, not by leaving them out."""
    for tool, schema in (await _served()).items():
        missing = [name for name, spec in schema["properties"].items() if not spec.get("description")]
        assert missing == [], (tool, missing)


def _typed(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """A schema has a type: its own, its definition's, or every branch of its union has one."""
    if "type" in schema:
        return True
    if "$ref" in schema:
        return _typed(root["$defs"][schema["$ref"].removeprefix("#/$defs/")], root)
    options = schema.get("anyOf")
    return bool(options) and all(_typed(option, root) for option in options)


def _untyped(schema: Any, root: dict[str, Any], path: str) -> list[str]:
    """The path of every property, array item or union branch under ``schema`` that has no type."""
    if not isinstance(schema, dict):
        return []
    found = [path] if path and not _typed(schema, root) else []
    for name, spec in schema.get("properties", {}).items():
        found += _untyped(spec, root, f"{path}.{name}")
    if schema.get("type") == "array" or "items" in schema:
        items = schema.get("items")
        found += [f"{path}[]"] if items is None else _untyped(items, root, f"{path}[]")
    for index, option in enumerate(schema.get("anyOf", [])):
        found += _untyped(option, root, f"{path}|{index}")
    if isinstance(schema.get("additionalProperties"), dict):
        found += _untyped(schema["additionalProperties"], root, f"{path}{{}}")
    for name, definition in schema.get("$defs", {}).items():
        found += _untyped(definition, root, f"$defs.{name}")
    return found


async def test_every_property_has_a_type_nested_included() -> None:
    for tool, schema in (await _served()).items():
        assert _untyped(schema, schema, "") == [], tool


def test_an_untyped_property_or_item_is_found() -> None:
    """The walk above is not vacuous: router_ask_many's `tool_choice` as it was, and an array without
    items, are reported."""
    schema = {
        "type": "object",
        "properties": {"tool_choice": {"description": "As in router_call."}, "messages": {"type": "array"}},
    }
    assert _untyped(schema, schema, "") == [".tool_choice", ".messages[]"]


async def test_router_ask_many_names_router_calls_shapes_with_their_types() -> None:
    schema = (await _served())["router_ask_many"]["properties"]
    assert schema["tool_choice"]["anyOf"] == [
        {"enum": ["auto", "none", "required"], "type": "string"},
        {"type": "object"},
    ]
    assert schema["messages"]["items"] == {"type": "object"} == schema["tools"]["items"]


async def test_no_host_meets_a_discriminator_or_a_oneof() -> None:
    """Codex reads ``anyOf`` only: a ``oneOf`` of content blocks would lose every block's shape."""
    for tool, schema in (await _served()).items():
        text = json.dumps(schema)
        assert '"oneOf"' not in text and '"discriminator"' not in text, tool


async def test_every_block_type_is_still_accepted_by_the_published_schema() -> None:
    from jsonschema import Draft202012Validator

    schema = (await _served())["router_call"]
    validator = Draft202012Validator(schema)
    assistant = [
        {"type": "thinking", "thinking": "t", "signature": "s", "provider_state": {"k": 1}},
        {"type": "redacted_thinking", "data": "d"},
        {"type": "text", "text": "x", "provider_state": {"k": 1}},
        {"type": "tool_use", "id": "call_1", "name": "f", "input": {}},
    ]
    user = [
        {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "r"}]},
        {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
    ]
    call = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": assistant},
            {"role": "user", "content": user},
        ],
        "tool_choice": {"type": "tool", "name": "f"},
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
    }
    assert list(validator.iter_errors(call)) == []
    assert not validator.is_valid({**call, "surprise": 1})


JSON_SCHEMA_KEYWORDS = st.sampled_from(["type", "oneOf", "discriminator", "minLength", "additionalProperties", "x"])


@given(
    schema=st.recursive(
        st.sampled_from([True, 1, "string", None]),
        lambda inner: st.dictionaries(JSON_SCHEMA_KEYWORDS, inner, max_size=4) | st.lists(inner, max_size=3),
        max_leaves=15,
    )
)
def test_the_host_form_leaves_no_oneof_or_discriminator_anywhere(schema: Any) -> None:
    text = json.dumps(for_hosts(schema))
    assert '"oneOf"' not in text and '"discriminator"' not in text
    assert '"minLength": 1' not in text and '"additionalProperties": true' not in text


@pytest.mark.parametrize("name", ["minLength", "additionalProperties"])
def test_the_host_form_keeps_other_values_of_the_keywords_it_drops(name: str) -> None:
    kept = {name: 2} if name == "minLength" else {name: False}
    assert for_hosts({"type": "string", **kept}) == {"type": "string", **kept}
