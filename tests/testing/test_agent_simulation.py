"""Simulated tools (§2): rule order, replies, sequences, errors, checks before rules, coverage."""

from __future__ import annotations

import json
from typing import Any

from agent_fakes import ScriptedCaller, bad_json_call, calls, scenario, text

from colibri_router.testing import ModelToolCall, run_scenario
from colibri_router.testing.scenario import validate_scenario
from colibri_router.testing.simulate import NO_RESPONSE, ToolSimulator

ORDER_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "filters": {"type": "object"}},
    "required": ["order_id"],
}


def simulator(*tools: dict[str, Any]) -> ToolSimulator:
    return ToolSimulator(validate_scenario(scenario(tools=list(tools))).tools)


def tool(responses: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": "lookup_order", "input_schema": ORDER_SCHEMA, "responses": responses, **extra}


def call(arguments: dict[str, Any], name: str = "lookup_order") -> ModelToolCall:
    return ModelToolCall(id="c1", name=name, input=arguments)


def test_rules_are_tried_in_order_and_the_first_match_wins() -> None:
    run = simulator(
        tool(
            [
                {"when": {"order_id": {"$regex": "^1"}}, "then": "first"},
                {"when": {"order_id": "12345"}, "then": "second"},
            ]
        )
    ).start()
    answer = run.answer(call({"order_id": "12345"}))
    assert (answer.content, answer.rule, answer.is_error) == ("first", "lookup_order.responses[0]", False)


def test_nested_when_matches_in_any_key_order() -> None:
    rule = {"when": {"order_id": "1", "filters": {"status": "open", "region": {"country": "FR", "zip": "75"}}}}
    run = simulator(tool([{**rule, "then": "hit"}])).start()
    reordered = {"filters": {"region": {"zip": "75", "country": "FR", "extra": 1}, "status": "open"}, "order_id": "1"}
    assert run.answer(call(reordered)).content == "hit"


def test_a_string_then_is_sent_verbatim_and_others_as_compact_json() -> None:
    run = simulator(
        tool(
            [
                {"when": {"order_id": "s"}, "then": 'He said "ok"'},
                {"when": {"order_id": "o"}, "then": {"status": "shipped", "items": [1, 2]}},
                {"when": {"order_id": "n"}, "then": None},
                {"when": {"order_id": "e"}, "error": {"code": 404}},
            ]
        )
    ).start()
    assert run.answer(call({"order_id": "s"})).content == 'He said "ok"'
    assert run.answer(call({"order_id": "o"})).content == '{"status":"shipped","items":[1,2]}'
    assert run.answer(call({"order_id": "n"})).content == "null"
    errored = run.answer(call({"order_id": "e"}))
    assert (errored.content, errored.is_error) == ('{"code":404}', True)


def test_an_error_reply_is_flagged() -> None:
    answer = simulator(tool([{"when": {}, "error": "order not found"}])).start().answer(call({"order_id": "9"}))
    assert (answer.content, answer.is_error, answer.problem) == ("order not found", True, None)


def test_a_sequence_answers_the_kth_matching_call_and_repeats_its_last() -> None:
    sequence = [{"then": "one"}, {"error": "two"}, {"then": "three"}]
    simulated = simulator(tool([{"when": {"order_id": "1"}, "sequence": sequence}, {"when": {}, "then": "other"}]))
    run = simulated.start()
    answers = [run.answer(call({"order_id": order})) for order in ("1", "2", "1", "1", "1")]
    assert [(a.content, a.is_error, a.sequence_index) for a in answers] == [
        ("one", False, 0),
        ("other", False, None),
        ("two", True, 1),
        ("three", False, 2),
        ("three", False, 2),
    ]
    assert simulated.start().answer(call({"order_id": "1"})).content == "one"  # every run starts over


def test_default_response_and_the_unmatched_error() -> None:
    with_default = simulator(tool([{"when": {"order_id": "1"}, "then": "x"}], defaultResponse={"error": "unknown"}))
    answer = with_default.start().answer(call({"order_id": "2"}))
    assert (answer.content, answer.is_error, answer.rule) == ("unknown", True, "lookup_order.defaultResponse")
    without = simulator(tool([{"when": {"order_id": "1"}, "then": "x"}])).start().answer(call({"order_id": "2"}))
    assert (without.content, without.is_error, without.problem) == (NO_RESPONSE, True, "unmatched")


def test_calls_no_rule_may_see_are_answered_with_what_was_wrong() -> None:
    run = simulator(tool([{"when": {}, "then": "x"}])).start()
    unknown = run.answer(call({}, name="delete_everything"))
    assert unknown.problem == "unknown_tool"
    assert unknown.content == "unknown tool 'delete_everything'; the available tools are: lookup_order"
    bad_json = run.answer(ModelToolCall(id="c", name="lookup_order", input={}, parse_error="Expecting value"))
    assert bad_json.problem == "unparseable_arguments"
    assert "not a valid JSON object (Expecting value)" in bad_json.content
    invalid = run.answer(call({"order_id": 12345}))
    assert invalid.problem == "invalid_arguments"
    assert "input schema at $.order_id: 12345 is not of type 'string'" in invalid.content
    assert all(answer.is_error and answer.rule is None for answer in (unknown, bad_json, invalid))


def test_templates_fill_replies_from_the_arguments() -> None:
    run = simulator(tool([{"when": {}, "then": {"echo": "order {{args.order_id}}"}}])).start()
    assert run.answer(call({"order_id": "77"})).content == '{"echo":"order 77"}'


async def test_a_run_answers_every_rule_kind_in_its_tool_results() -> None:
    document = scenario(
        tools=[
            tool(
                [
                    {"when": {"order_id": "s"}, "then": "plain text"},
                    {"when": {"order_id": "e"}, "error": "order not found"},
                ]
            )
        ],
        max_steps=3,
    )
    caller = ScriptedCaller(
        {
            "fake": [
                calls(("lookup_order", {"order_id": "s"}), ("lookup_order", {"order_id": "e"})),
                bad_json_call("lookup_order", '{"order_id": '),
                text("done"),
            ]
        }
    )
    report = await run_scenario(document, caller=caller)
    second, third = caller.calls[1], caller.calls[2]
    results = second.messages[-1]["content"]
    assert [(block["content"], block.get("is_error", False)) for block in results] == [
        ("plain text", False),
        ("order not found", True),
    ]
    assert third.messages[-1]["content"][0]["is_error"] is True
    assert "not a valid JSON object" in third.messages[-1]["content"][0]["content"]
    run = report.models[0].results[0]
    assert run.stop_reason == "end_turn"  # bad JSON was answered, the run went on
    assert [call.problem for call in run.all_tool_calls] == [None, None, "unparseable_arguments"]
    assert [flagged.tool for flagged in report.coverage.invalid_calls] == ["lookup_order"]


async def test_coverage_lists_rules_never_hit_unmatched_calls_and_unknown_tools() -> None:
    document = scenario(
        tools=[tool([{"when": {"order_id": "1"}, "then": "x"}, {"when": {"order_id": "2"}, "then": "y"}])],
        repeat=2,
    )
    caller = ScriptedCaller(
        {
            "fake": [
                calls(("lookup_order", {"order_id": "1"}), ("lookup_order", {"order_id": "3"}), ("ghost", {})),
                text("ok"),
            ]
        }
    )
    report = await run_scenario(document, caller=caller)
    coverage = report.coverage
    assert coverage.rules_never_hit == ["lookup_order.responses[1]"]
    assert [(c.tool, c.input, c.repeat, c.step) for c in coverage.unmatched_calls] == [
        ("lookup_order", {"order_id": "3"}, 1, 1),
        ("lookup_order", {"order_id": "3"}, 2, 1),
    ]
    assert [(c.tool, c.repeat) for c in coverage.unknown_tools] == [("ghost", 1), ("ghost", 2)]
    assert json.loads(report.model_dump_json())["coverage"]["rules_never_hit"] == ["lookup_order.responses[1]"]
