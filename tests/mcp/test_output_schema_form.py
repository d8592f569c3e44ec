"""The published output schemas are rewritten for fast validation (references inlined, nullable
types as type lists): they must accept and reject exactly what the models' own schemas do (the success
object or the error object), except where they describe fewer levels (router_run's report, the error
object's fields), where they must accept all the models' schemas accept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from colibri_router.server.generate_schemas import OUTPUTS, collapsed, for_validation, result_schema
from colibri_router.server.schemas import SCHEMAS_FILE
from colibri_router.server.table import BY_NAME

PUBLISHED = {tool: schemas["output"] for tool, schemas in json.loads(SCHEMAS_FILE.read_text("utf-8")).items()}
ORIGINAL = {tool: result_schema(tool) for tool in OUTPUTS}


def _names(schema: Any) -> set[str]:
    """Every property name anywhere in ``schema``: the keys generated objects draw from."""
    if isinstance(schema, list):
        return set().union(*(_names(item) for item in schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    own = set(schema.get("properties", {})) if isinstance(schema.get("properties"), dict) else set()
    return own.union(*(_names(value) for value in schema.values()))


def _json(names: list[str]) -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.sampled_from(["", "ok", "x"])
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(names), inner, max_size=4),
        max_leaves=12,
    )


def _instances(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    """Objects shaped like one of the result's two shapes (keys from its properties, values anything)."""
    schema = ORIGINAL[tool]
    values = _json(sorted(_names(schema)))
    shapes = []
    for option in schema["anyOf"]:
        shape = schema["$defs"][option["$ref"].removeprefix("#/$defs/")]
        required = dict.fromkeys(shape.get("required", []), values)
        optional = {name: values for name in shape["properties"] if name not in required}
        shapes.append(st.fixed_dictionaries(required, optional=optional))
    return st.one_of(shapes)


@pytest.mark.parametrize("tool", sorted(OUTPUTS))
def test_no_reference_or_nullable_branch_is_left_to_resolve(tool: str) -> None:
    text = json.dumps(PUBLISHED[tool])
    assert "$ref" not in text and "$defs" not in text
    assert '{"type": "null"}' not in text


@pytest.mark.parametrize("tool", sorted(OUTPUTS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_published_form_accepts_what_the_model_schema_accepts(tool: str, data: st.DataObject) -> None:
    """Exactly what it accepts, on the levels it describes: the error object's and router_run's report's
    deeper levels are left to the models (their values only need the right type)."""
    instance = data.draw(_instances(tool))
    original, published = Draft202012Validator(ORIGINAL[tool]), Draft202012Validator(PUBLISHED[tool])

    if original.is_valid(instance):
        assert published.is_valid(instance)
    if BY_NAME[tool].result_levels is None and "error" not in instance:
        assert original.is_valid(instance) == published.is_valid(instance)


def test_a_collapsed_schema_keeps_the_outer_levels_and_only_the_type_below() -> None:
    schema = {
        "type": "object",
        "properties": {
            "runs": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            "who": {"type": "string"},
        },
        "required": ["runs"],
    }
    flat = collapsed(schema, 1)
    assert flat == {**schema, "properties": {"runs": {"type": "array"}, "who": {"type": "string"}}}
    validator = Draft202012Validator(flat)
    assert validator.is_valid({"runs": [{"n": "any"}]}) and not validator.is_valid({"runs": {}})
    assert not validator.is_valid({"who": "x"})  # runs is still required


def test_a_real_result_with_every_nullable_field_set_both_ways_is_valid() -> None:
    from colibri_router.schema import RouterCallResult

    bare = RouterCallResult(
        provider="kimi",
        content="hi",
        model="m",
        prompt_tokens=1,
        completion_tokens=1,
        cached_tokens=0,
        cache_write_tokens=0,
        reasoning_tokens=0,
        cost_usd=None,
        price_source=None,
        latency_ms=1,
        ttft_ms=None,
        stop_reason=None,
        tool_calls=[],
        thinking=None,
        warnings=[],
        message=None,
        attempts=[],
    ).model_dump()
    full = {
        **bare,
        "cost_usd": 0.1,
        "ttft_ms": 3,
        "thinking": "t",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        "tool_calls": [{"id": "call_1", "name": "f", "input": {}}],
        "attempts": [{"provider": "kimi", "model": "m", "outcome": "ok", "kind": None, "latency_ms": 1}],
        "files_read": [{"path": "a.py", "bytes": 3, "tokens_estimated": 1}],
    }
    validator = Draft202012Validator(PUBLISHED["router_call"])
    for instance in (bare, full):
        assert validator.is_valid(instance), list(validator.iter_errors(instance))
    assert not validator.is_valid({**full, "message": {"role": "assistant"}})  # content is required


def test_a_nullable_enum_keeps_its_null_branch_and_a_recursive_definition_is_refused() -> None:
    enum_or_null = {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]}
    schema = {"type": "object", "properties": {"pick": enum_or_null}}
    assert for_validation(schema)["properties"]["pick"] == enum_or_null

    recursive = {"$defs": {"Node": {"properties": {"next": {"$ref": "#/$defs/Node"}}}}, "$ref": "#/$defs/Node"}
    with pytest.raises(ValueError, match="refers to itself"):
        for_validation(recursive)
