"""The scenario model: shape, references, error paths, loading from files and text, overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_fakes import scenario

from colibri_router.testing import Scenario, ScenarioError, load_scenario, parse_scenario
from colibri_router.testing.scenario import validate_scenario, with_overrides


def problems_of(document: Any) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioError) as caught:
        validate_scenario(document)
    return caught.value.problems


def paths_of(document: Any) -> list[str]:
    return [path for path, _ in problems_of(document)]


def test_a_minimal_scenario_has_the_documented_defaults() -> None:
    loaded = validate_scenario(scenario())
    assert (loaded.repeat, loaded.max_steps, loaded.allow_truncation) == (1, 10, False)
    assert loaded.pass_criteria.min_pass_rate == 1.0
    assert [turn.user for turn in loaded.script] == ["Look up order 12345."]


def test_the_format_version_is_required_and_checked() -> None:
    document = scenario()
    del document["colibri"]
    assert paths_of(document) == ["colibri"]
    assert paths_of(scenario(colibri=2)) == ["colibri"]


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"extra": 1}, "extra"),
        ({"tools": [{**scenario()["tools"][0], "note": "x"}]}, "tools[0].note"),
        ({"expect": [{"type": "no_tool_calls", "tool": "x"}]}, "expect[0].tool"),
        ({"turns": [{"user": "hi", "who": "me"}], "prompt": None}, "turns[0].who"),
        ({"pass": {"min_pass_rate": 1, "max": 2}}, "pass.max"),
    ],
)
def test_unknown_keys_are_rejected_at_their_path(overrides: dict[str, Any], path: str) -> None:
    document = {key: value for key, value in scenario(**overrides).items() if value is not None}
    assert path in paths_of(document)


def test_errors_name_nested_field_paths() -> None:
    document = scenario(
        expect=[
            {"type": "tool_called", "tool": "lookup_order", "times": {"min": 2, "max": 1}},
            {"type": "final_text", "max_chars": -1},
            {"type": "nope"},
        ],
        messages=[{"role": "user", "content": [{"type": "text"}]}],
    )
    found = dict(problems_of(document))
    assert "expect[0].times" in found
    assert "expect[1].max_chars" in found
    assert "expect[2]" in found
    assert "messages[0].content[0].text" in found


def test_a_tool_named_in_expect_must_exist() -> None:
    document = scenario(
        expect=[
            {"type": "tool_called", "tool": "refund"},
            {"type": "trajectory", "steps": ["lookup_order", ["lookup_order", "cancel"]]},
            {"type": "args_valid", "tool": "ghost"},
            {"type": "tool_not_called", "tool": "lookup_order"},
        ]
    )
    found = problems_of(document)
    assert [path for path, _ in found] == ["expect[0]", "expect[1]", "expect[2]"]
    assert "'refund' is not declared in `tools` (declared: lookup_order)" in found[0][1]
    assert "'cancel'" in found[1][1]


def test_turn_labels_are_unique_and_assertions_name_existing_ones() -> None:
    document = scenario(
        prompt=None,
        turns=[{"label": "ask", "user": "a"}, {"label": "ask", "user": "b"}],
        expect=[{"type": "no_tool_calls", "turn": "confirm"}],
    )
    del document["prompt"]
    assert dict(problems_of(document)) == {
        "turns[1]": "duplicate label 'ask'",
        "expect[0].turn": "no scripted turn is labelled 'confirm'",
    }


def test_duplicate_models_and_tools_are_rejected() -> None:
    tool = scenario()["tools"][0]
    assert set(paths_of(scenario(models=["a", "a"], tools=[tool, tool]))) == {"models[1]", "tools[1]"}


def test_prompt_is_one_turn_and_excludes_turns() -> None:
    both = scenario(turns=[{"user": "hi"}])
    assert problems_of(both) == [("prompt", "give `prompt` or `turns`, not both")]
    neither = scenario()
    del neither["prompt"]
    assert paths_of(neither) == ["turns"]
    answered_first = scenario(messages=[{"role": "user", "content": "hello"}])
    del answered_first["prompt"]
    assert validate_scenario(answered_first).script == []


def test_max_steps_is_capped_at_50() -> None:
    assert validate_scenario(scenario(max_steps=50)).max_steps == 50
    assert paths_of(scenario(max_steps=51)) == ["max_steps"]
    assert paths_of(scenario(max_steps=0)) == ["max_steps"]


def test_a_response_gives_exactly_one_of_then_error_sequence() -> None:
    tool = scenario()["tools"][0]
    rules = [
        {"when": {}, "then": 1, "error": "x"},
        {"when": {}},
        {"when": {}, "sequence": [{"then": 1, "error": "x"}]},
        {"when": {}, "sequence": []},
    ]
    found = paths_of(scenario(tools=[{**tool, "responses": rules}]))
    assert found == [
        "tools[0].responses[0]",
        "tools[0].responses[1]",
        "tools[0].responses[2].sequence[0]",
        "tools[0].responses[3].sequence",
    ]


def test_a_plain_default_response_value_is_rejected_with_a_hint() -> None:
    tool = {**scenario()["tools"][0], "defaultResponse": {"status": "ok"}}
    found = dict(problems_of(scenario(tools=[tool])))
    assert found == {"tools[0].defaultResponse": _hint()}


def _hint() -> str:
    return "give exactly one of `then`, `error` or `sequence` (a plain value is written {then: VALUE})"


def test_then_null_is_a_reply() -> None:
    tool = {**scenario()["tools"][0], "defaultResponse": {"then": None}}
    assert validate_scenario(scenario(tools=[tool])).tools[0].default_response is not None


def test_input_schemas_and_when_patterns_are_checked() -> None:
    tool = {
        **scenario()["tools"][0],
        "input_schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "low"}}},
        "responses": [{"when": {"n": {"$between": [1, 2]}}, "then": 1}],
    }
    found = problems_of(
        scenario(tools=[tool], expect=[{"type": "tool_called", "tool": "lookup_order", "args": {"x": {"$regex": "("}}}])
    )
    assert [path for path, _ in found] == [
        "tools[0].input_schema",
        "tools[0].responses[0].when.n.$between",
        "expect[0].args.x.$regex",
    ]


def test_params_are_router_call_options() -> None:
    assert validate_scenario(scenario(params={"temperature": 0.2, "max_tokens": 100})).params["max_tokens"] == 100
    assert paths_of(scenario(params={"messages": []})) == ["params.messages"]
    assert paths_of(scenario(params={"temperature": 9})) == ["params.temperature"]
    assert paths_of(scenario(params={"temprature": 0.2})) == ["params.temprature"]
    named = {"type": "tool", "name": "lookup_order"}
    assert validate_scenario(scenario(params={"tool_choice": named})).params["tool_choice"] == named
    assert paths_of(scenario(params={"tool_choice": {**named, "name": "ghost"}})) == ["params.tool_choice.name"]


@pytest.mark.parametrize(
    ("assertion", "message"),
    [
        ({"type": "final_text"}, "give at least one of contains"),
        ({"type": "budget"}, "give at least one of max_steps"),
        ({"type": "trajectory", "steps": [], "mode": "in_order"}, "steps is empty"),
        ({"type": "final_text", "regex": "("}, "invalid regular expression"),
        ({"type": "stop_reason", "in": ["error"]}, "Input should be 'end_turn' or 'max_steps'"),
        ({"type": "judge", "rubric": "good", "model": "m", "threshold": 2}, "less than or equal to 1"),
    ],
)
def test_assertions_that_would_check_nothing_or_cannot_hold_are_rejected(
    assertion: dict[str, Any], message: str
) -> None:
    found = problems_of(scenario(expect=[assertion]))
    assert found[0][0].startswith("expect[0]")
    assert message in found[0][1]


def test_assertion_shorthands_normalize() -> None:
    loaded = validate_scenario(
        scenario(
            expect=[
                {"type": "tool_called", "tool": "lookup_order", "times": 2},
                {"type": "trajectory", "steps": ["lookup_order", ["lookup_order", {"tool": "lookup_order"}]]},
                {"type": "final_text", "contains": "shipped"},
            ]
        )
    )
    times, trajectory, final = loaded.expect
    assert times.times.min == times.times.max == 2  # type: ignore[union-attr]
    assert [[call.tool for call in step] for step in trajectory.steps] == [["lookup_order"], ["lookup_order"] * 2]  # type: ignore[union-attr]
    assert final.contains == ["shipped"]  # type: ignore[union-attr]


def test_load_from_yaml_json_mapping_and_text(tmp_path: Path) -> None:
    document = scenario()
    yaml_path = tmp_path / "s.yaml"
    yaml_path.write_text("colibri: 1\nname: lookup\nmodels: [fake]\nprompt: hi\n", encoding="utf-8")
    json_path = tmp_path / "s.json"
    json_path.write_text(json.dumps(document), encoding="utf-8")
    assert load_scenario(yaml_path).name == "lookup"
    assert load_scenario(str(json_path)).tools[0].name == "lookup_order"
    assert load_scenario(document).name == "lookup"
    loaded = parse_scenario(json.dumps(document))
    assert load_scenario(loaded) is loaded
    assert isinstance(loaded, Scenario)


def test_duplicate_keys_and_bad_documents_are_invalid(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="duplicate key 'name'"):
        parse_scenario("colibri: 1\nname: a\nname: b\nmodels: [m]\nprompt: p\n")
    json_path = tmp_path / "dup.json"
    json_path.write_text('{"colibri": 1, "colibri": 1}', encoding="utf-8")
    with pytest.raises(ScenarioError, match="duplicate key 'colibri'"):
        load_scenario(json_path)
    with pytest.raises(ScenarioError, match="not valid YAML"):
        parse_scenario("colibri: [1\n")
    with pytest.raises(ScenarioError, match="a scenario is a mapping"):
        parse_scenario("- just a list\n")
    with pytest.raises(ScenarioError, match="cannot read the file") as caught:
        load_scenario(tmp_path / "missing.yaml")
    assert str(tmp_path / "missing.yaml") in str(caught.value)


def test_overrides_are_validated_like_the_scenario() -> None:
    base = validate_scenario(scenario(repeat=2, params={"temperature": 0.5}))
    changed = with_overrides(base, models=["a", "b"], repeat=3, max_steps=20)
    assert (changed.models, changed.repeat, changed.max_steps, changed.params) == (
        ["a", "b"],
        3,
        20,
        {"temperature": 0.5},
    )
    assert with_overrides(base) is base
    with pytest.raises(ScenarioError) as caught:
        with_overrides(base, max_steps=60)
    assert [path for path, _ in caught.value.problems] == ["max_steps"]


def test_the_scenario_json_schema_uses_the_yaml_names() -> None:
    schema = Scenario.model_json_schema(by_alias=True)
    assert {"colibri", "pass", "expect", "tools"} <= schema["properties"].keys()
    assert "defaultResponse" in json.dumps(schema)
