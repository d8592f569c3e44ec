"""The report (§5): pass@k and pass^k, verdicts, flakiness, comparison, detail levels, exit codes."""

from __future__ import annotations

from math import comb
from typing import Any

import pytest
from agent_fakes import ScriptedCaller, calls, failing, scenario, text
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.testing import ExitCode, ModelCall, ModelStep, exit_code, run_scenario
from colibri_router.testing.report import RunReport, model_report, pass_at_k, pass_hat_k
from colibri_router.testing.transcript import RunError

TOOLS = [
    {"name": name, "input_schema": {"type": "object"}, "responses": [{"when": {}, "then": "ok"}]}
    for name in ("lookup_order", "issue_refund", "escalate")
]


def test_pass_at_k_and_pass_hat_k_against_hand_computed_values() -> None:
    # n = 5 runs, c = 2 passing
    assert [pass_at_k(5, 2, k) for k in range(1, 6)] == [0.4, 0.7, 0.9, 1.0, 1.0]  # 1 - C(3,k)/C(5,k)
    assert [pass_hat_k(5, 2, k) for k in range(1, 6)] == [0.4, 0.1, 0.0, 0.0, 0.0]  # C(2,k)/C(5,k)
    assert (pass_at_k(3, 3, 3), pass_hat_k(3, 3, 3)) == (1.0, 1.0)
    assert (pass_at_k(3, 0, 2), pass_hat_k(3, 0, 2)) == (0.0, 0.0)
    assert pass_at_k(2, 1, 3) is None
    assert pass_hat_k(0, 0, 1) is None


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_bounds_pass_hat_k(case: tuple[int, int, int]) -> None:
    n, c, k = case
    at, hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    assert at is not None and hat is not None
    assert 0 <= hat <= pass_hat_k(n, c, 1) == pass_at_k(n, c, 1) <= at <= 1  # type: ignore[operator]
    assert at == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-6)


def run(repeat: int, status: str, trajectory: list[list[str]] | None = None, **fields: Any) -> RunReport:
    return RunReport(
        turns=[],
        all_tool_calls=[],
        final_text="",
        stop_reason="error" if status == "error" else "end_turn",
        truncated=False,
        total_usage={"prompt_tokens": 10},
        total_latency_ms=100 * repeat,
        cost_usd=0.001,
        model="m",
        repeat=repeat,
        status=status,
        steps=1,
        trajectory=trajectory or [],
        **fields,
    )


def test_a_model_report_counts_rates_and_verdicts() -> None:
    results = [run(1, "passed", [["a"]]), run(2, "failed", [["b"]]), run(3, "passed", [["a"]]), run(4, "error")]
    report = model_report("m", results, repeat=4, min_pass_rate=0.6)
    assert (report.runs, report.passed, report.failed, report.errors) == (4, 2, 1, 1)
    assert report.pass_rate == round(2 / 3, 6)
    assert report.pass_at_k == {1: round(2 / 3, 6), 2: 1.0, 3: 1.0, 4: None}
    assert report.pass_hat_k == {1: round(2 / 3, 6), 2: round(1 / 3, 6), 3: 0.0, 4: None}
    assert (report.flaky, report.distinct_trajectories) == (True, 2)
    assert report.verdict == "error"  # the rate holds, but a run errored
    assert report.latency_ms.model_dump() == {"p50": 250, "max": 400}
    assert (report.cost_usd, report.total_usage) == (0.004, {"prompt_tokens": 40})
    assert model_report("m", results, repeat=4, min_pass_rate=0.7).verdict == "fail"
    parallel = [run(1, "passed", [["a", "b"]]), run(2, "passed", [["b", "a"]])]
    assert model_report("m", parallel, repeat=2, min_pass_rate=1.0).distinct_trajectories == 1
    assert model_report("m", results[:1], repeat=1, min_pass_rate=1.0).verdict == "pass"
    assert model_report("m", results[3:], repeat=1, min_pass_rate=1.0).verdict == "error"


async def test_comparison_against_the_first_model() -> None:
    document = scenario(models=["ref", "other"], tools=TOOLS, repeat=3)

    def other(call: ModelCall) -> ModelStep:
        script = {
            1: calls(("lookup_order", {"order_id": "999"})),
            2: calls(("escalate", {})) if call.origin.repeat < 3 else calls(("issue_refund", {"id": "c2"})),
            3: text("done"),
        }
        return script[call.origin.step]

    caller = ScriptedCaller(
        {
            "ref": [calls(("lookup_order", {"order_id": "12345"})), calls(("issue_refund", {"id": "c2"})), text("ok")],
            "other": other,
        }
    )
    report = await run_scenario(document, caller=caller)
    (comparison,) = report.comparison
    assert (comparison.model, comparison.reference, comparison.same_trajectory) == ("other", "ref", False)
    assert (comparison.diverges_at, comparison.reference_step, comparison.step) == (2, ["issue_refund"], ["escalate"])
    assert (comparison.only_this_model, comparison.missed) == (["escalate"], [])
    assert [(d.tool, d.path, d.reference, d.value) for d in comparison.argument_differences] == [
        ("lookup_order", "order_id", "12345", "999")
    ]
    assert report.models[1].distinct_trajectories == 2


async def test_summary_detail_keeps_the_report_short() -> None:
    document = scenario(expect=[{"type": "final_text", "contains": "x"}, {"type": "no_tool_calls"}])
    report = await run_scenario(document, caller=ScriptedCaller({"fake": [text("y" * 500)]}))
    full, summary = report.to_json("full"), report.to_json("summary")
    full_run, summary_run = full["models"][0]["results"][0], summary["models"][0]["results"][0]
    assert {"turns", "all_tool_calls"} <= full_run.keys()
    assert not {"turns", "all_tool_calls"} & summary_run.keys()
    assert [a["type"] for a in full_run["assertions"]] == ["final_text", "no_tool_calls"]
    assert [a["type"] for a in summary_run["assertions"]] == ["final_text"]
    assert len(summary_run["final_text"]) == 200
    assert summary["models"][0]["pass_at_k"] == {"1": 0.0}
    for seed_name in ("turns", "final_text", "all_tool_calls", "total_usage", "total_latency_ms"):
        assert seed_name in full_run


async def test_totals_add_up_every_run() -> None:
    caller = ScriptedCaller(
        {
            "a": [
                calls(("lookup_order", {}), cost_usd=0.002, usage={"prompt_tokens": 5}),
                text("ok", cost_usd=0.001, latency_ms=30),
            ],
            "b": [text("ok")],
        }
    )
    report = await run_scenario(scenario(models=["a", "b"], tools=TOOLS, repeat=2), caller=caller)
    totals = report.totals
    assert (totals.runs, totals.passed, totals.steps, totals.tool_calls) == (4, 4, 6, 2)
    assert (totals.cost_usd, totals.unpriced_steps, totals.total_latency_ms) == (0.006, 2, 60)
    assert totals.total_usage == {"prompt_tokens": 10}


async def test_exit_codes() -> None:
    passing = await run_scenario(scenario(), caller=ScriptedCaller({"fake": [text("ok")]}))
    failing_report = await run_scenario(
        scenario(expect=[{"type": "final_text", "contains": "x"}]), caller=ScriptedCaller({"fake": [text("ok")]})
    )
    errored = await run_scenario(scenario(), caller=ScriptedCaller({"fake": failing()}))
    assert exit_code([passing]) == ExitCode.PASSED == 0
    assert exit_code([passing, failing_report, errored]) == ExitCode.FAILED == 1
    assert exit_code([passing, errored]) == ExitCode.ERRORED == 3
    assert ExitCode.INVALID_INPUT == 2


def test_an_errored_run_is_not_a_failure() -> None:
    errored = run(1, "error", error=RunError(code="X", kind="Y", message="z"))
    assert model_report("m", [errored], repeat=1, min_pass_rate=1.0).failures == []
