"""Record and replay: the same report with no network, misses are errors, repeats stay apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_fakes import ScriptedCaller, calls, failing, scenario, text

from colibri_router.testing import ModelCall, ModelStep, Recorder, RecordingError, Replayer, run_scenario
from colibri_router.testing.caller import CallOrigin
from colibri_router.testing.record import REPLAY_MISS, request_hash

EXPECT = [
    {"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345"}},
    {"type": "judge", "rubric": "Says the order shipped.", "model": "judge"},
]


def live_caller() -> ScriptedCaller:
    def model(call: ModelCall) -> ModelStep:
        order = "12345" if call.origin.repeat != 2 else "999"  # repeat 2 differs: it must not borrow repeat 1's answers
        if call.origin.step == 1:
            return calls(("lookup_order", {"order_id": order}), latency_ms=321, cost_usd=0.001)
        return text(f"Order {order} shipped.", latency_ms=123, usage={"prompt_tokens": 40})

    return ScriptedCaller({"kimi": model, "judge": [text('{"score": 0.9, "reason": "yes"}')]})


async def test_three_repeats_recorded_then_replayed_give_the_same_report(tmp_path: Path) -> None:
    recording = tmp_path / "calls.jsonl"
    document = scenario(models=["kimi"], repeat=3, expect=EXPECT)
    recorded = await run_scenario(document, caller=Recorder(live_caller(), recording))
    replayed = await run_scenario(document, caller=Replayer.load(recording))
    assert replayed.model_dump() == recorded.model_dump()
    assert recorded.models[0].passed == 2
    assert [run.total_latency_ms for run in replayed.models[0].results] == [444, 444, 444]
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    assert len(lines) == 3 * 3  # two steps and one judge per repeat
    assert {tuple(sorted(line)) for line in lines} == {("key", "request", "request_hash", "step", "v")}
    assert "authorization" not in recording.read_text().lower()


async def test_a_changed_scenario_misses_and_the_run_errors(tmp_path: Path) -> None:
    recording = tmp_path / "calls.jsonl"
    await run_scenario(scenario(models=["kimi"]), caller=Recorder(live_caller(), recording))
    changed = await run_scenario(scenario(models=["kimi"], prompt="Another question"), caller=Replayer.load(recording))
    run = changed.models[0].results[0]
    assert run.status == "error"
    assert run.error is not None
    assert run.error.code == REPLAY_MISS
    assert "differs from the recording (in messages)" in run.error.message


async def test_repeats_are_never_served_from_one_another(tmp_path: Path) -> None:
    recording = tmp_path / "calls.jsonl"
    await run_scenario(scenario(models=["kimi"], repeat=1), caller=Recorder(live_caller(), recording))
    replayed = await run_scenario(scenario(models=["kimi"], repeat=2), caller=Replayer.load(recording))
    first, second = replayed.models[0].results
    assert first.status == "passed"
    assert second.error is not None
    assert second.error.message == "no recorded call for lookup / kimi / repeat 2 / step 1"


async def test_a_recorded_error_replays_as_that_error(tmp_path: Path) -> None:
    recording = tmp_path / "calls.jsonl"
    recorder = Recorder(ScriptedCaller({"kimi": failing()}), recording)
    live = await run_scenario(scenario(models=["kimi"]), caller=recorder)
    replayed = await run_scenario(scenario(models=["kimi"]), caller=Replayer.load(recording))
    assert replayed.model_dump() == live.model_dump()
    assert replayed.models[0].results[0].error is not None


async def test_the_last_recording_of_a_key_wins(tmp_path: Path) -> None:
    recording = tmp_path / "calls.jsonl"
    await run_scenario(scenario(models=["kimi"]), caller=Recorder(ScriptedCaller({"kimi": [text("old")]}), recording))
    await run_scenario(scenario(models=["kimi"]), caller=Recorder(ScriptedCaller({"kimi": [text("new")]}), recording))
    replayed = await run_scenario(scenario(models=["kimi"]), caller=Replayer.load(recording))
    assert replayed.models[0].results[0].final_text == "new"


def test_the_request_hash_ignores_where_the_call_comes_from() -> None:
    def call(repeat: int, temperature: float) -> ModelCall:
        origin = CallOrigin(scenario="s", model="m", repeat=repeat, step=1)
        return ModelCall(
            model="m", messages=[{"role": "user", "content": "hi"}], params={"temperature": temperature}, origin=origin
        )

    assert request_hash(call(1, 0.2)) == request_hash(call(2, 0.2))
    assert request_hash(call(1, 0.2)) != request_hash(call(1, 0.3))


def test_a_malformed_recording_is_invalid_input(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"v": 1}\n', encoding="utf-8")
    with pytest.raises(RecordingError, match="line 1"):
        Replayer.load(broken)
    with pytest.raises(RecordingError, match="cannot read"):
        Replayer.load(tmp_path / "absent.jsonl")
