"""Assertions (§4): each type passing and failing, scopes, soft, trajectories, clean protocol, judge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from agent_fakes import ScriptedCaller, calls, failing, scenario, text
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from colibri_router.testing import ModelCall, ModelStep, run_scenario
from colibri_router.testing.assertions import AssertionResult, Scope, check
from colibri_router.testing.expectations import Assertion, ExpectedCall
from colibri_router.testing.trajectory import check_trajectory, lcs_f1
from colibri_router.testing.transcript import RunStop, StepRecord, ToolCallRecord

ASSERTION: TypeAdapter[Assertion] = TypeAdapter(Assertion)
TOOLS = [
    {"name": name, "input_schema": {"type": "object"}, "responses": [{"when": {}, "then": "ok"}]}
    for name in ("search", "fetch", "book", "lookup_order")
]


def call(step: int, name: str, arguments: dict[str, Any] | None = None, **fields: Any) -> ToolCallRecord:
    return ToolCallRecord(
        step=step,
        id=f"{step}-{name}",
        name=name,
        input=arguments or {},
        result="ok",
        is_error=fields.get("problem") is not None,
        **fields,
    )


def step(index: int, answer: str = "", **fields: Any) -> StepRecord:
    return StepRecord(index=index, turn=fields.pop("turn", 1), model="m", text=answer, **fields)


def scope(
    calls_: Sequence[ToolCallRecord] = (), *, final: str = "Done.", stop: RunStop = "end_turn", **last: Any
) -> Scope:
    count = max([c.step for c in calls_] + [0]) + 1
    steps = [step(index) for index in range(1, count)] + [step(count, final, **last)]
    return Scope("the run", steps, list(calls_), stop, [])


def run_check(assertion: dict[str, Any], on: Scope) -> AssertionResult:
    return check(ASSERTION.validate_python(assertion), on)


ORDER = [call(1, "lookup_order", {"order_id": "12345", "verbose": True}), call(2, "book", {"id": "c2"})]


@pytest.mark.parametrize(
    ("assertion", "passed"),
    [
        ({"type": "tool_called", "tool": "lookup_order"}, True),
        ({"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345"}}, True),
        ({"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345"}, "args_mode": "exact"}, False),
        (
            {
                "type": "tool_called",
                "tool": "lookup_order",
                "args": {"order_id": "12345", "verbose": True},
                "args_mode": "exact",
            },
            True,
        ),
        ({"type": "tool_called", "tool": "lookup_order", "times": 2}, False),
        ({"type": "tool_called", "tool": "book", "times": {"max": 1}}, True),
        ({"type": "tool_called", "tool": "search"}, False),
        ({"type": "tool_not_called", "tool": "search"}, True),
        ({"type": "tool_not_called", "tool": "book"}, False),
        ({"type": "tool_not_called", "tool": "book", "args": {"id": "c1"}}, True),
        ({"type": "no_tool_calls"}, False),
        ({"type": "stop_reason", "in": ["end_turn"]}, True),
        ({"type": "stop_reason", "in": ["max_steps"]}, False),
        ({"type": "final_text", "contains": ["Done"]}, True),
        ({"type": "final_text", "contains": ["done"]}, False),
        ({"type": "final_text", "icontains": ["DONE"]}, True),
        ({"type": "final_text", "not_contains": ["Done"]}, False),
        ({"type": "final_text", "regex": "^Do.e\\.$"}, True),
        ({"type": "final_text", "regex": "^x"}, False),
        ({"type": "final_text", "equals": " Done.\n"}, True),
        ({"type": "final_text", "equals": "Done"}, False),
        ({"type": "final_text", "max_chars": 5}, True),
        ({"type": "final_text", "max_chars": 4}, False),
        ({"type": "budget", "max_steps": 3, "max_tool_calls": 2}, True),
        ({"type": "budget", "max_tool_calls": 1}, False),
        ({"type": "clean_protocol"}, True),
        ({"type": "args_valid"}, True),
    ],
)
def test_each_assertion_passes_and_fails(assertion: dict[str, Any], passed: bool) -> None:
    result = run_check(assertion, scope(ORDER))
    assert result.passed is passed, result.message
    assert result.type == assertion["type"]
    assert result.score == (1.0 if passed else result.score)


def test_no_tool_calls_passes_on_a_text_answer() -> None:
    assert run_check({"type": "no_tool_calls"}, scope()).passed


def test_a_failed_tool_called_shows_the_closest_calls_argument_diff() -> None:
    calls_ = [
        call(1, "lookup_order", {"order_id": "999", "region": "EU"}),
        call(2, "lookup_order", {"order_id": "123"}),
    ]
    result = run_check(
        {"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345", "region": "EU"}}, scope(calls_)
    )
    assert not result.passed
    assert result.actual["closest"]["step"] == 1
    assert result.actual["closest"]["differences"] == [
        {"path": "order_id", "expected": "12345", "actual": "999", "reason": 'expected "12345", got "999"'}
    ]
    assert 'closest call (step 1): order_id: expected "12345", got "999"' in result.message


def test_a_tool_never_called_says_what_was_called() -> None:
    result = run_check({"type": "tool_called", "tool": "search"}, scope(ORDER))
    assert "the model called ['book', 'lookup_order']" in result.message


def test_budget_counts_cost_and_latency() -> None:
    priced = Scope(
        "the run", [step(1, cost_usd=0.02, latency_ms=700), step(2, "x", latency_ms=400)], [], "end_turn", []
    )
    result = run_check({"type": "budget", "max_cost_usd": 0.01, "max_latency_ms": 2000}, priced)
    assert (result.passed, result.score, result.actual) == (False, 0.5, {"cost_usd": 0.02, "latency_ms": 1100})
    assert result.message == "over budget: cost_usd 0.02 > 0.01"


def test_args_valid_fails_on_invalid_arguments_and_on_nothing_to_check() -> None:
    invalid = [call(1, "lookup_order", {"order_id": 1}, problem="invalid_arguments"), call(1, "book")]
    result = run_check({"type": "args_valid"}, scope(invalid))
    assert (result.passed, result.score) == (False, 0.5)
    empty = run_check({"type": "args_valid", "tool": "search"}, scope(ORDER))
    assert (empty.passed, empty.message) == (False, "nothing to check: no calls to search in the run")


def test_clean_protocol_fails_on_repairs_and_on_unparseable_arguments() -> None:
    repaired = run_check({"type": "clean_protocol"}, scope(ORDER, repairs=["markers_parsed"]))
    assert (repaired.passed, repaired.actual) == (False, {"3": ["markers_parsed"]})
    unparseable = run_check({"type": "clean_protocol"}, scope([call(1, "book", parse_error="Expecting value")]))
    assert (unparseable.passed, unparseable.actual) == (False, {"1": ["arguments_unparseable"]})


def test_an_empty_scope_has_nothing_to_check() -> None:
    empty = Scope("turn 'confirm'", [], [], "end_turn", [])
    result = run_check({"type": "tool_not_called", "tool": "book"}, empty)
    assert (result.passed, result.message) == (False, "nothing to check: turn 'confirm' has no model answer")


# --- trajectories ----------------------------------------------------------------------------------

PARALLEL = [call(1, "search", {"q": "a"}), call(1, "fetch"), call(2, "book")]


@pytest.mark.parametrize(
    ("steps", "mode", "passed"),
    [
        ([["search", "fetch"], "book"], "exact", True),
        ([["fetch", "search"], "book"], "exact", True),
        (["search", "fetch", "book"], "exact", False),
        ([["search", "fetch"]], "exact", False),
        (["search", "book"], "in_order", True),
        (["fetch", "book"], "in_order", True),
        (["book", "search"], "in_order", False),
        ([["fetch", "search"], "book"], "in_order", True),
        ([["search", "book"]], "in_order", False),
        (["book", "fetch", "search"], "unordered", True),
        (["book", "fetch"], "unordered", False),
        (["book", {"tool": "search", "args": {"q": "a"}}], "contains", True),
        (["book", {"tool": "search", "args": {"q": "b"}}], "contains", False),
        (["book", "book"], "contains", False),
        (["book", "fetch", "search", "lookup_order"], "within", True),
        (["book", "fetch"], "within", False),
    ],
)
def test_trajectory_modes(steps: list[Any], mode: str, passed: bool) -> None:
    result = run_check({"type": "trajectory", "steps": steps, "mode": mode}, scope(PARALLEL))
    assert result.passed is passed, result.message
    assert result.actual == [["search", "fetch"], ["book"]]


def expected(*names: str) -> list[list[ExpectedCall]]:
    return [[ExpectedCall(tool=name)] for name in names]


def actual(*names: str) -> list[list[ToolCallRecord]]:
    return [[call(index, name)] for index, name in enumerate(names, start=1)]


def test_lcs_f1_against_hand_computed_values() -> None:
    assert lcs_f1(expected("a", "b", "c"), actual("a", "b", "c")) == 1.0
    # LCS 2 of 3 expected and 4 actual: P = 1/2, R = 2/3, F1 = 4/7
    assert lcs_f1(expected("a", "b", "c"), actual("a", "x", "c", "y")) == round(4 / 7, 4)
    assert lcs_f1(expected("a"), actual("b")) == 0.0
    assert lcs_f1([], []) == 1.0
    assert lcs_f1(expected("a"), []) == 0.0


@given(st.permutations(["a", "b", "c", "d"]))
def test_any_order_of_the_same_calls_is_unordered_but_only_one_is_exact(order: list[str]) -> None:
    wanted = expected("a", "b", "c", "d")
    assert check_trajectory(wanted, actual(*order), "unordered").passed
    assert check_trajectory(wanted, actual(*order), "exact").passed == (order == ["a", "b", "c", "d"])
    assert check_trajectory(wanted, actual(*order), "within").passed


@given(st.lists(st.sampled_from("abc"), max_size=6), st.lists(st.sampled_from("abc"), max_size=6))
def test_a_subsequence_is_in_order_and_contained(wanted: list[str], extra: list[str]) -> None:
    interleaved = [name for pair in zip(wanted, extra + [""] * len(wanted), strict=False) for name in pair if name]
    interleaved += extra[len(wanted) :]
    assert check_trajectory(expected(*wanted), actual(*interleaved), "in_order").passed
    assert check_trajectory(expected(*wanted), actual(*interleaved), "contains").passed


# --- through runs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [("search", "fetch"), ("fetch", "search")])
async def test_parallel_calls_satisfy_a_parallel_step_in_either_order(order: tuple[str, str]) -> None:
    document = scenario(tools=TOOLS, expect=[{"type": "trajectory", "steps": [["search", "fetch"]], "mode": "exact"}])
    caller = ScriptedCaller({"fake": [calls(*((name, {}) for name in order)), text("done")]})
    report = await run_scenario(document, caller=caller)
    run = report.models[0].results[0]
    assert run.status == "passed", run.assertions
    assert run.trajectory == [list(order)]


async def test_marker_repairs_pass_tool_called_and_fail_clean_protocol() -> None:
    document = scenario(
        expect=[
            {"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345"}},
            {"type": "clean_protocol"},
        ]
    )
    repaired = calls(("lookup_order", {"order_id": "12345"}), repairs=["markers_parsed"])
    report = await run_scenario(document, caller=ScriptedCaller({"fake": [repaired, text("Shipped.")]}))
    tool_called, clean = report.models[0].results[0].assertions
    assert tool_called.passed
    assert not clean.passed
    assert clean.message == "the router repaired the model's tool calling: step 1: markers_parsed"


async def test_turn_scoped_assertions_see_only_their_turn() -> None:
    document = scenario(
        prompt=None,
        tools=TOOLS,
        turns=[{"label": "ask", "user": "find it"}, {"label": "confirm", "user": "book it"}],
        expect=[
            {"type": "tool_not_called", "tool": "book", "turn": "ask"},
            {"type": "trajectory", "steps": ["book"], "turn": "confirm"},
            {"type": "final_text", "contains": "Found", "turn": "ask"},
            {"type": "stop_reason", "in": ["end_turn"], "turn": "ask"},
        ],
    )
    del document["prompt"]
    caller = ScriptedCaller({"fake": [calls(("search", {})), text("Found."), calls(("book", {})), text("Booked.")]})
    report = await run_scenario(document, caller=caller)
    assert [(r.passed, r.message) for r in report.models[0].results[0].assertions if not r.passed] == []


async def test_a_turn_never_reached_has_nothing_to_check() -> None:
    document = scenario(
        prompt=None,
        turns=[{"label": "ask", "user": "a"}, {"label": "confirm", "user": "b"}],
        max_steps=1,
        allow_truncation=True,
        expect=[{"type": "no_tool_calls", "turn": "confirm"}],
    )
    del document["prompt"]
    report = await run_scenario(document, caller=ScriptedCaller({"fake": [text("a")]}))
    run = report.models[0].results[0]
    assert (run.stop_reason, run.status) == ("max_steps", "failed")
    assert run.assertions[0].message == "nothing to check: turn 'confirm' has no model answer"


async def test_soft_assertions_are_reported_but_never_fail_the_run() -> None:
    document = scenario(expect=[{"type": "final_text", "contains": "refund", "soft": True}])
    report = await run_scenario(document, caller=ScriptedCaller({"fake": [text("No.")]}))
    run = report.models[0].results[0]
    assert (run.status, run.assertions[0].passed, run.assertions[0].soft) == ("passed", False, True)
    assert report.models[0].failures == []


# --- judge -------------------------------------------------------------------------------------------

JUDGE = {"type": "judge", "rubric": "The answer is polite.", "model": "judge", "threshold": 0.7}


async def judged(answer: ModelStep | None, **judge: Any) -> tuple[Any, list[ModelCall]]:
    scripts: dict[str, Any] = {"fake": [text("Thank you, it is done.", cost_usd=0.5)]}
    scripts["judge"] = failing("ANTHROPIC_API_ERROR", "OVERLOADED") if answer is None else {0: answer}
    caller = ScriptedCaller(scripts)
    report = await run_scenario(scenario(expect=[{**JUDGE, **judge}]), caller=caller)
    return report.models[0].results[0], [c for c in caller.calls if c.model == "judge"]


async def test_a_judge_passes_on_a_score_at_the_threshold_and_its_cost_is_apart() -> None:
    run, judge_calls = await judged(text('Verdict: {"score": 0.7, "reason": "polite"}', cost_usd=0.25))
    result = run.assertions[0]
    assert (result.passed, result.score, result.actual) == (True, 0.7, {"score": 0.7, "reason": "polite"})
    assert (run.cost_usd, run.judge_cost_usd) == (0.5, 0.25)
    (judge_call,) = judge_calls
    prompt = judge_call.messages[0]["content"]
    assert "The answer is polite." in prompt
    assert "Thank you, it is done." in prompt
    assert (judge_call.origin.purpose, judge_call.origin.step, judge_call.tools) == ("judge", 0, [])


async def test_a_judge_fails_below_the_threshold_or_without_a_score() -> None:
    low, _ = await judged(text('{"score": 0.2, "reason": "curt"}'))
    assert (low.status, low.assertions[0].message) == ("failed", "judged 0.2 < 0.7: curt")
    unparseable, _ = await judged(text("I think it is fine."))
    assert not unparseable.assertions[0].passed
    assert "holds no score between 0 and 1" in unparseable.assertions[0].message
    out_of_range, _ = await judged(text('{"score": 7}'))
    assert not out_of_range.assertions[0].passed


async def test_a_failed_judge_call_errors_the_run() -> None:
    run, _ = await judged(None)
    assert run.status == "error"
    assert run.judge_error is not None
    assert run.judge_error.code == "ANTHROPIC_API_ERROR"
