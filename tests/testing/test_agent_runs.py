"""The loop (§3) and the runner: messages, model switches, stop reasons, limits, progress, cancellation."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_fakes import ScriptedCaller, calls, failing, scenario, text

from colibri_router.errors import ConfigError
from colibri_router.testing import (
    CONCURRENCY_VARIABLE,
    InvalidInput,
    ModelCall,
    ModelStep,
    RunProgress,
    ScenarioError,
    run_concurrency,
    run_scenario,
)

LOOKUP = ("lookup_order", {"order_id": "12345"})
TWO_TOOLS = [
    {"name": name, "input_schema": {"type": "object"}, "responses": [{"when": {}, "then": f"{name} done"}]}
    for name in ("lookup_order", "issue_refund")
]


async def test_the_assistant_turn_keeps_its_calls_and_one_user_turn_answers_them_all() -> None:
    caller = ScriptedCaller({"fake": [calls(LOOKUP, ("issue_refund", {"id": 1}), say="Checking."), text("Done.")]})
    await run_scenario(scenario(tools=TWO_TOOLS, system="Be brief.", params={"temperature": 0.1}), caller=caller)
    first, second = caller.calls
    assert (first.system, first.params, [t["name"] for t in first.tools]) == (
        "Be brief.",
        {"temperature": 0.1},
        ["lookup_order", "issue_refund"],
    )
    assert first.messages == [{"role": "user", "content": "Look up order 12345."}]
    assistant, results = second.messages[1:]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "call_lookup_order_0", "name": "lookup_order", "input": {"order_id": "12345"}},
            {"type": "tool_use", "id": "call_issue_refund_1", "name": "issue_refund", "input": {"id": 1}},
        ],
    }
    assert results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_lookup_order_0", "content": "lookup_order done"},
            {"type": "tool_result", "tool_use_id": "call_issue_refund_1", "content": "issue_refund done"},
        ],
    }


async def test_the_callers_own_assistant_message_is_appended_as_is() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {"type": "tool_use", "id": "x1", "name": "lookup_order", "input": {}},
        ],
    }
    step = calls(("lookup_order", {}), message=message)
    step = step.model_copy(update={"tool_calls": [step.tool_calls[0].model_copy(update={"id": "x1"})]})
    caller = ScriptedCaller({"fake": [step, text("ok")]})
    await run_scenario(scenario(tools=TWO_TOOLS), caller=caller)
    assert caller.calls[1].messages[1] == message
    assert caller.calls[1].messages[2]["content"][0]["tool_use_id"] == "x1"


async def test_a_scripted_turn_can_switch_model_and_the_tool_loop_goes_on() -> None:
    document = scenario(
        prompt=None,
        turns=[
            {"label": "ask", "user": "I was charged twice for order 12345."},
            {"label": "confirm", "user": "Yes, refund it.", "model": "claude"},
        ],
        tools=TWO_TOOLS,
        models=["kimi"],
    )
    del document["prompt"]
    caller = ScriptedCaller(
        {
            "kimi": [calls(LOOKUP), text("Refund the duplicate?")],
            "claude": {3: calls(("issue_refund", {"charge_id": "c2"})), 4: text("Refunded.")},
        }
    )
    report = await run_scenario(document, caller=caller)
    assert [call.model for call in caller.calls] == ["kimi", "kimi", "claude", "claude"]
    assert all(call.origin.model == "kimi" for call in caller.calls)  # the run stays in kimi's column
    third = caller.calls[2].messages
    assert [m["role"] for m in third] == ["user", "assistant", "user", "assistant", "user"]
    assert third[2]["content"][0]["content"] == "lookup_order done"  # claude sees kimi's tool loop
    assert third[4] == {"role": "user", "content": "Yes, refund it."}
    run = report.models[0].results[0]
    assert [(step.turn, step.model) for step in run.turns] == [(1, "kimi"), (1, "kimi"), (2, "claude"), (2, "claude")]
    assert run.trajectory == [["lookup_order"], ["issue_refund"]]
    assert (run.stop_reason, run.final_text) == ("end_turn", "Refunded.")


async def test_prior_messages_ending_with_a_user_turn_are_answered_first() -> None:
    document = scenario(messages=[{"role": "user", "content": "Hi"}], prompt=None, turns=[{"user": "And now?"}])
    del document["prompt"]
    caller = ScriptedCaller({"fake": [text("Hello."), text("Now this.")]})
    report = await run_scenario(document, caller=caller)
    assert [step.turn for step in report.models[0].results[0].turns] == [0, 1]
    assert caller.calls[1].messages == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "And now?"},
    ]


async def test_max_steps_truncates_and_fails_unless_allowed() -> None:
    looping = ScriptedCaller({"fake": lambda call: calls(LOOKUP)})
    report = await run_scenario(scenario(max_steps=3), caller=looping)
    run = report.models[0].results[0]
    assert (run.stop_reason, run.truncated, run.steps, run.status) == ("max_steps", True, 3, "failed")
    assert [result.type for result in run.assertions] == ["max_steps"]
    assert len(looping.calls) == 3
    allowed = await run_scenario(scenario(max_steps=3, allow_truncation=True), caller=looping)
    assert allowed.models[0].results[0].status == "passed"


async def test_the_cost_cap_stops_runs_before_their_next_call() -> None:
    priced = ScriptedCaller({"fake": [calls(LOOKUP, cost_usd=0.01), text("done", cost_usd=0.01)]})
    report = await run_scenario(scenario(repeat=3), caller=priced, max_cost_usd=0.005, concurrency=1)
    runs = report.models[0].results
    assert [(run.stop_reason, run.steps, run.status) for run in runs] == [
        ("budget", 1, "error"),
        ("budget", 0, "error"),
        ("budget", 0, "error"),
    ]
    assert report.totals.cost_usd == 0.01
    assert report.models[0].verdict == "error"


async def test_a_provider_error_makes_an_errored_run_without_assertions() -> None:
    document = scenario(expect=[{"type": "tool_called", "tool": "lookup_order"}])
    report = await run_scenario(document, caller=ScriptedCaller({"fake": failing()}))
    run = report.models[0].results[0]
    assert (run.stop_reason, run.status, run.assertions) == ("error", "error", [])
    assert run.error is not None
    assert (run.error.code, run.error.kind) == ("KIMI_API_ERROR", "RATE_LIMITED")
    assert report.models[0].failures == []


async def test_the_timeout_stops_every_run_and_keeps_what_they_did() -> None:
    async def slow_second_step(call: ModelCall) -> ModelStep:
        if call.origin.step == 1:
            return calls(LOOKUP)
        await anyio.sleep_forever()
        return text("never")

    report = await run_scenario(scenario(repeat=2), caller=slow_second_step, timeout_s=0.5)
    assert [(run.stop_reason, run.steps, run.status) for run in report.models[0].results] == [
        ("timeout", 1, "error"),
        ("timeout", 1, "error"),
    ]


async def test_setting_stop_cancels_every_run_and_still_reports() -> None:
    stop = anyio.Event()
    started = 0

    async def hang(call: ModelCall) -> ModelStep:
        nonlocal started
        started += 1
        if started == 2:
            stop.set()
        await anyio.sleep_forever()
        return text("never")

    report = await run_scenario(scenario(repeat=4), caller=hang, stop=stop, concurrency=2)
    assert [run.stop_reason for run in report.models[0].results] == ["cancelled"] * 4
    assert started == 2  # the two waiting for a slot never started


async def test_cancelling_the_caller_stops_every_call_in_flight() -> None:
    in_flight: list[int] = []
    cancelled: list[int] = []
    all_started = anyio.Event()

    async def hang(call: ModelCall) -> ModelStep:
        in_flight.append(call.origin.repeat)
        if len(in_flight) == 3:
            all_started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(call.origin.repeat)
            raise
        return text("never")

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: run_scenario(scenario(repeat=3), caller=hang, concurrency=3))
        await all_started.wait()
        group.cancel_scope.cancel()
    assert sorted(cancelled) == sorted(in_flight) == [1, 2, 3]


async def test_runs_execute_concurrently_up_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    running, peak = 0, 0

    async def counting(call: ModelCall) -> ModelStep:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.01)
        running -= 1
        return text("ok")

    monkeypatch.setenv(CONCURRENCY_VARIABLE, "2")
    await run_scenario(scenario(repeat=6), caller=counting)
    assert peak == 2
    peak = 0
    await run_scenario(scenario(repeat=6), caller=counting, concurrency=3)
    assert peak == 3


def test_the_concurrency_setting_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_concurrency() == 4
    monkeypatch.setenv(CONCURRENCY_VARIABLE, "7")
    assert run_concurrency() == 7
    assert run_concurrency(2) == 2
    monkeypatch.setenv(CONCURRENCY_VARIABLE, "many")
    with pytest.raises(ConfigError, match=CONCURRENCY_VARIABLE):
        run_concurrency()
    with pytest.raises(InvalidInput):
        run_concurrency(0)


async def test_progress_reports_each_finished_run() -> None:
    document = scenario(
        models=["good", "bad"],
        repeat=2,
        tools=TWO_TOOLS,
        expect=[{"type": "trajectory", "steps": ["lookup_order"]}, {"type": "final_text", "contains": "ok"}],
    )
    caller = ScriptedCaller({"good": [calls(LOOKUP), text("ok")], "bad": [calls(("issue_refund", {})), text("nope")]})
    seen: list[RunProgress] = []

    async def record(progress: RunProgress) -> None:
        seen.append(progress)

    await run_scenario(document, caller=caller, on_progress=record, concurrency=1)
    assert [progress.message for progress in seen] == [
        "1/4 good repeat 1: passed",
        "2/4 bad repeat 1: failed trajectory, final_text",
        "3/4 good repeat 2: passed",
        "4/4 bad repeat 2: failed trajectory, final_text",
    ]
    errored: list[str] = []

    async def record_error(progress: RunProgress) -> None:
        errored.append(progress.message)

    await run_scenario(scenario(), caller=ScriptedCaller({"fake": failing()}), on_progress=record_error)
    assert errored == ["1/1 fake repeat 1: error KIMI_API_ERROR"]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"max_steps": 51}, ScenarioError),
        ({"repeat": 0}, ScenarioError),
        ({"max_cost_usd": -1}, InvalidInput),
        ({"timeout_s": 0}, InvalidInput),
    ],
)
async def test_invalid_run_options_are_refused_before_any_call(options: dict[str, Any], error: type[Exception]) -> None:
    caller = ScriptedCaller({"fake": [text("ok")]})
    with pytest.raises(error):
        await run_scenario(scenario(), caller=caller, **options)
    assert caller.calls == []


async def test_models_override_replaces_the_scenarios_models() -> None:
    caller = ScriptedCaller({"a": [text("ok")], "b": [text("ok")]})
    report = await run_scenario(scenario(), caller=caller, models=["a", "b"], repeat=2)
    assert [(model.model, model.runs) for model in report.models] == [("a", 2), ("b", 2)]
