"""Our strict-mode transformation and validation (colibri_router.structured), property-tested.

hypothesis draws a schema (nested objects, arrays, enums, anyOf, $defs/$ref, optional fields) together
with an answer valid for it; strict mode writes every key, null for the optional ones left out. The
transformed schema must accept that answer, must pass the fake's OpenAI strict checks, and restoring
it must give back the caller's answer, which validation against the original schema then accepts.
"""

from __future__ import annotations

import json
from typing import Any

from fake_upstream.structured_rules import gemini_output_problems, strict_schema_problems
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from colibri_router.providers.structured import GEMINI_SCHEMA, OPENAI_STRICT
from colibri_router.structured.transform import closable, prepare, restore
from colibri_router.structured.validate import judge

NAMES = st.sampled_from(["a", "b", "c", "name", "tags", "kind", "urgent"])
Pair = tuple[dict[str, Any], Any, Any]  # schema, the caller's answer, the answer strict mode writes


@st.composite
def leaf(draw: st.DrawFn) -> Pair:
    kind = draw(st.sampled_from(["string", "integer", "boolean", "enum", "number"]))
    if kind == "enum":
        options = draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=3, unique=True))
        value = draw(st.sampled_from(options))
        return {"enum": options}, value, value
    value = draw(
        {
            "string": st.text(max_size=5),
            "integer": st.integers(-5, 5),
            "boolean": st.booleans(),
            "number": st.integers(-5, 5),
        }[kind]
    )
    return {"type": kind}, value, value


def _object(draw: st.DrawFn, children: st.SearchStrategy[Pair]) -> Pair:
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    properties, required, value, strict_value = {}, [], {}, {}
    for name in names:
        schema, item, strict_item = draw(children)
        properties[name] = schema
        if draw(st.booleans()):
            required.append(name)
            value[name], strict_value[name] = item, strict_item
        elif draw(st.booleans()):
            value[name], strict_value[name] = item, strict_item
        else:
            strict_value[name] = None  # left out by the caller: strict mode must still write the key
    return {"type": "object", "properties": properties, "required": required}, value, strict_value


@st.composite
def node(draw: st.DrawFn, depth: int = 0) -> Pair:
    if depth >= 2:
        return draw(leaf())
    shape = draw(st.sampled_from(["leaf", "object", "array", "anyOf"]))
    children = node(depth + 1)
    if shape == "object":
        return _object(draw, children)
    if shape == "array":
        schema, item, strict_item = draw(children)
        count = draw(st.integers(0, 2))
        return {"type": "array", "items": schema}, [item] * count, [strict_item] * count
    if shape == "anyOf":
        first, second = draw(leaf()), draw(children)
        chosen = draw(st.sampled_from([first, second]))
        return {"anyOf": [first[0], second[0]]}, chosen[1], chosen[2]
    return draw(leaf())


@st.composite
def documents(draw: st.DrawFn) -> Pair:
    """A root object, sometimes with a part of it moved into $defs and reached by $ref."""
    schema, value, strict_value = _object(draw, node(1))
    if draw(st.booleans()):
        name = next(iter(schema["properties"]))
        schema["$defs"] = {"Part": schema["properties"][name]}
        schema["properties"][name] = {"$ref": "#/$defs/Part"}
    return schema, value, strict_value


@settings(max_examples=200, deadline=None)
@given(documents())
def test_strict_transformation_accepts_what_strict_mode_writes_and_restores_the_callers_answer(pair: Pair) -> None:
    schema, value, strict_value = pair
    assert Draft202012Validator(schema).is_valid(value)
    prepared = prepare(schema, OPENAI_STRICT)
    assert prepared.strict and prepared.lost == {}
    assert strict_schema_problems(prepared.schema, "answer") == []
    assert Draft202012Validator(prepared.schema).is_valid(strict_value)
    assert restore(strict_value, schema) == value
    verdict = judge(json.dumps(strict_value), schema)
    assert verdict.ok and verdict.value == value


@settings(max_examples=100, deadline=None)
@given(documents(), st.sampled_from(["x", 7, None, [1]]))
def test_validation_against_the_original_decides(pair: Pair, intruder: Any) -> None:
    """An answer the original schema refuses is refused, whatever the transformed one would say."""
    schema, value, _ = pair
    broken = {**value, "not_declared_here": intruder}
    schema = {**schema, "additionalProperties": False}
    verdict = judge(json.dumps(broken), schema)
    assert not verdict.ok and "not_declared_here" in verdict.errors[0]


def test_keywords_strict_mode_cannot_send_are_removed_and_named() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 3}, "tags": {"type": "array", "uniqueItems": True}},
        "required": ["name", "tags"],
    }
    prepared = prepare(schema, OPENAI_STRICT)
    assert prepared.lost == {"$.properties.name": {"minLength": 3}, "$.properties.tags": {"uniqueItems": True}}
    assert strict_schema_problems(prepared.schema, "answer") == []
    assert not judge('{"name": "ab", "tags": []}', schema).ok  # the original still decides


def test_one_of_becomes_any_of_and_open_objects_make_strict_impossible() -> None:
    prepared = prepare({"type": "object", "properties": {"v": {"oneOf": [{"type": "string"}]}}}, OPENAI_STRICT)
    assert prepared.schema["properties"]["v"] == {"anyOf": [{"anyOf": [{"type": "string"}]}, {"type": "null"}]}
    assert not closable({"type": "object", "properties": {"meta": {"type": "object"}}})
    assert not prepare({"type": "object", "additionalProperties": True, "properties": {}}, OPENAI_STRICT).strict


def test_gemini_gets_only_its_keyword_subset() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$", "const": "ABC"}},
        "required": ["code"],
    }
    prepared = prepare(schema, GEMINI_SCHEMA)
    assert prepared.lost == {"$.properties.code": {"pattern": "^[A-Z]+$", "const": "ABC"}}
    config = {"responseMimeType": "application/json", "responseJsonSchema": prepared.schema}
    assert gemini_output_problems(config) == []
    assert gemini_output_problems({**config, "responseJsonSchema": schema}) != []  # the fake would refuse it


def test_an_answer_in_a_code_fence_or_not_json() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert judge('```json\n{"a": 1}\n```', schema).value == {"a": 1}
    verdict = judge("I think a is one", schema)
    assert not verdict.ok and verdict.errors[0].startswith("$: the answer is not JSON")


def test_the_docs_table_names_every_http_provider_with_its_registry_form() -> None:
    """docs/structured-output.md's table starts each row with the form the registry gives the provider."""
    from pathlib import Path

    from colibri_router.providers import BUILTIN
    from colibri_router.providers.wires import WIRE_FORMS

    text = (Path(__file__).parents[2] / "docs" / "structured-output.md").read_text()
    rows = {
        line.split("|")[1].strip(): line.split("|")[2].strip() for line in text.splitlines() if line.startswith("| ")
    }
    http = [spec for spec in BUILTIN.values() if not spec.subscription]
    assert len(http) == 16 and set(rows) >= {spec.name for spec in http}
    for spec in http:
        assert rows[spec.name].startswith((spec.structured or WIRE_FORMS[spec.wire]).label), spec.name


BOUNDS = {"minLength": 0, "maximum": 1000, "minimum": -1000, "uniqueItems": False, "multipleOf": 1}


@settings(max_examples=100, deadline=None)
@given(documents(), st.sampled_from(sorted(BOUNDS)))
def test_what_claude_and_gemini_are_sent_passes_their_checks_and_still_takes_the_answer(
    pair: Pair, keyword: str
) -> None:
    """A bound Claude's or Gemini's form cannot take is moved out of what is sent (into the prompt);
    what is sent passes the fake's checks and still accepts what strict decoding writes."""
    from fake_upstream.structured_rules import anthropic_output_problems

    from colibri_router.providers.structured import ANTHROPIC_NATIVE

    schema, _, strict_value = pair
    schema["properties"] = {name: {**sub, keyword: BOUNDS[keyword]} for name, sub in schema["properties"].items()}
    claude = prepare(schema, ANTHROPIC_NATIVE)
    body = {"output_config": {"format": {"type": "json_schema", "schema": claude.schema}}}
    assert anthropic_output_problems(body, None) == []
    assert Draft202012Validator(claude.schema).is_valid(strict_value)
    gemini = prepare(schema, GEMINI_SCHEMA)
    assert gemini_output_problems({"responseMimeType": "application/json", "responseJsonSchema": gemini.schema}) == []
    lost = {kw for keywords in [*claude.lost.values(), *gemini.lost.values()] for kw in keywords}
    assert keyword in lost  # Claude takes none of these bounds
