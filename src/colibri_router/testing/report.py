"""The canonical report of a scenario (the CLI's JSON and the MCP tool's ``structuredContent``).

Per model: ``runs``, ``passed``, ``failed``, ``errors``; ``pass_rate`` = passed / scored runs (a run
that errored is neither a pass nor a failure); with c of n scored runs passing, for k = 1..repeat,
``pass_at_k[k]`` = 1 - C(n-c, k)/C(n, k) (at least one of k runs passes) and ``pass_hat_k[k]`` =
C(c, k)/C(n, k) (all k pass), None when k > n; ``flaky`` when some scored runs pass and some fail;
``distinct_trajectories`` among scored runs; ``verdict``: ``fail`` when the pass rate is below the
scenario's ``min_pass_rate``, else ``error`` when a run errored (or none was scored), else ``pass``.
The scenario's verdict is the worst of its models'.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from enum import IntEnum
from math import comb
from typing import Any, Literal

from pydantic import BaseModel, Field

from colibri_router.testing.assertions import AssertionResult
from colibri_router.testing.compare import ModelComparison, compare_models, trajectory_signature
from colibri_router.testing.simulate import ToolSimulator
from colibri_router.testing.transcript import ConversationResult, RunError, sum_usage, trajectory_of

RunStatus = Literal["passed", "failed", "error"]
Verdict = Literal["pass", "fail", "error"]
Detail = Literal["summary", "full"]
SUMMARY_TEXT_CHARS = 200


class RunOutcome(BaseModel):
    """Which run, how it went: first in a run's report, before the conversation it had."""

    model: str
    repeat: int = Field(description="1-based.")
    status: RunStatus
    steps: int = Field(description="Model calls made (the length of `turns`).")
    trajectory: list[list[str]] = Field(description="Tool names per step that called tools.")
    assertions: list[AssertionResult] = Field(default_factory=list)
    judge_cost_usd: float = 0.0
    judge_error: RunError | None = None


class RunReport(ConversationResult, RunOutcome):
    """One run (a model, a repeat): its outcome, then its conversation (:class:`ConversationResult`'s fields)."""


class Latency(BaseModel):
    p50: int | None
    max: int | None


class Failure(BaseModel):
    repeat: int
    assertion: str
    label: str | None = None
    message: str


class ModelReport(BaseModel):
    model: str
    runs: int
    passed: int
    failed: int
    errors: int
    pass_rate: float | None
    pass_at_k: dict[int, float | None]
    pass_hat_k: dict[int, float | None]
    flaky: bool
    distinct_trajectories: int
    verdict: Verdict
    cost_usd: float
    judge_cost_usd: float
    latency_ms: Latency
    total_usage: dict[str, int]
    failures: list[Failure]
    results: list[RunReport]


class FlaggedCall(BaseModel):
    model: str
    repeat: int
    step: int
    tool: str
    input: dict[str, Any]
    problem: str


class Coverage(BaseModel):
    rules_never_hit: list[str] = Field(description="Simulation rules no call of any run reached.")
    unmatched_calls: list[FlaggedCall] = Field(description="Calls no rule or default answered.")
    unknown_tools: list[FlaggedCall] = Field(description="Calls to tools the scenario does not declare.")
    invalid_calls: list[FlaggedCall] = Field(description="Calls with unparseable or schema-invalid arguments.")


class Totals(BaseModel):
    runs: int
    passed: int
    failed: int
    errors: int
    steps: int
    tool_calls: int
    cost_usd: float
    judge_cost_usd: float
    unpriced_steps: int
    total_latency_ms: int
    total_usage: dict[str, int]


class Report(BaseModel):
    scenario: str
    verdict: Verdict
    min_pass_rate: float
    models: list[ModelReport]
    comparison: list[ModelComparison] = Field(description="Each model against the first one (the reference).")
    coverage: Coverage
    totals: Totals

    def to_json(self, detail: Detail = "full") -> dict[str, Any]:
        """The report as JSON data; ``summary`` drops each run's steps and tool calls, passing assertions,
        and shortens final texts, to keep a host's context small."""
        data = self.model_dump(mode="json")
        if detail == "summary":
            for model in data["models"]:
                for run in model["results"]:
                    del run["turns"], run["all_tool_calls"]
                    run["assertions"] = [result for result in run["assertions"] if not result["passed"]]
                    if len(run["final_text"]) > SUMMARY_TEXT_CHARS:
                        run["final_text"] = run["final_text"][: SUMMARY_TEXT_CHARS - 1] + "…"
        return data


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The chance that at least one of k runs drawn from n (c passing) passes; None when k > n."""
    return None if k > n or k < 1 else round(1 - comb(n - c, k) / comb(n, k), 6)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """The chance that all of k runs drawn from n (c passing) pass; None when k > n."""
    return None if k > n or k < 1 else round(comb(c, k) / comb(n, k), 6)


def model_report(model: str, results: Sequence[RunReport], repeat: int, min_pass_rate: float) -> ModelReport:
    passed = sum(run.status == "passed" for run in results)
    failed = sum(run.status == "failed" for run in results)
    errors = len(results) - passed - failed
    scored = passed + failed
    pass_rate = round(passed / scored, 6) if scored else None
    if pass_rate is not None and pass_rate < min_pass_rate:
        verdict: Verdict = "fail"
    elif errors or pass_rate is None:
        verdict = "error"
    else:
        verdict = "pass"
    latencies = [run.total_latency_ms for run in results if run.steps]
    signatures = {trajectory_signature(run) for run in results if run.status != "error"}
    return ModelReport(
        model=model,
        runs=len(results),
        passed=passed,
        failed=failed,
        errors=errors,
        pass_rate=pass_rate,
        pass_at_k={k: pass_at_k(scored, passed, k) for k in range(1, repeat + 1)},
        pass_hat_k={k: pass_hat_k(scored, passed, k) for k in range(1, repeat + 1)},
        flaky=0 < passed < scored,
        distinct_trajectories=len(signatures),
        verdict=verdict,
        cost_usd=round(sum(run.cost_usd for run in results), 6),
        judge_cost_usd=round(sum(run.judge_cost_usd for run in results), 6),
        latency_ms=Latency(
            p50=round(statistics.median(latencies)) if latencies else None,
            max=max(latencies) if latencies else None,
        ),
        total_usage=sum_usage(run.total_usage for run in results),
        failures=[
            Failure(repeat=run.repeat, assertion=result.type, label=result.label, message=result.message)
            for run in results
            if run.status == "failed"
            for result in run.assertions
            if not result.passed and not result.soft
        ],
        results=list(results),
    )


def build_report(
    scenario: str,
    models: Sequence[str],
    results: Sequence[RunReport],
    simulator: ToolSimulator,
    *,
    repeat: int,
    min_pass_rate: float,
) -> Report:
    """The report of every run of a scenario; ``results`` in any order (they are sorted by model and repeat)."""
    by_model = {model: sorted((r for r in results if r.model == model), key=lambda r: r.repeat) for model in models}
    reports = [model_report(model, runs, repeat, min_pass_rate) for model, runs in by_model.items()]
    verdicts = {report.verdict for report in reports}
    verdict: Verdict = "fail" if "fail" in verdicts else "error" if "error" in verdicts else "pass"
    ordered = [run for report in reports for run in report.results]
    return Report(
        scenario=scenario,
        verdict=verdict,
        min_pass_rate=min_pass_rate,
        models=reports,
        comparison=compare_models(by_model),
        coverage=coverage(ordered, simulator),
        totals=Totals(
            runs=len(ordered),
            passed=sum(report.passed for report in reports),
            failed=sum(report.failed for report in reports),
            errors=sum(report.errors for report in reports),
            steps=sum(run.steps for run in ordered),
            tool_calls=sum(len(run.all_tool_calls) for run in ordered),
            cost_usd=round(sum(run.cost_usd for run in ordered), 6),
            judge_cost_usd=round(sum(run.judge_cost_usd for run in ordered), 6),
            unpriced_steps=sum(run.unpriced_steps for run in ordered),
            total_latency_ms=sum(run.total_latency_ms for run in ordered),
            total_usage=sum_usage(run.total_usage for run in ordered),
        ),
    )


def coverage(results: Sequence[RunReport], simulator: ToolSimulator) -> Coverage:
    hit = {call.rule for run in results for call in run.all_tool_calls if call.rule is not None}
    flagged = [
        FlaggedCall(
            model=run.model, repeat=run.repeat, step=call.step, tool=call.name, input=call.input, problem=call.problem
        )
        for run in results
        for call in run.all_tool_calls
        if call.problem is not None
    ]
    return Coverage(
        rules_never_hit=[rule for rule in simulator.rule_ids if rule not in hit],
        unmatched_calls=[call for call in flagged if call.problem == "unmatched"],
        unknown_tools=[call for call in flagged if call.problem == "unknown_tool"],
        invalid_calls=[call for call in flagged if call.problem in ("unparseable_arguments", "invalid_arguments")],
    )


def run_report(
    conversation: ConversationResult,
    *,
    model: str,
    repeat: int,
    status: RunStatus,
    assertions: list[AssertionResult],
    judge_cost_usd: float = 0.0,
    judge_error: RunError | None = None,
) -> RunReport:
    return RunReport(
        **dict(conversation),
        model=model,
        repeat=repeat,
        status=status,
        steps=len(conversation.turns),
        trajectory=trajectory_of(conversation.all_tool_calls),
        judge_cost_usd=judge_cost_usd,
        judge_error=judge_error,
        assertions=assertions,
    )


class ExitCode(IntEnum):
    """The CLI's exit status for a set of scenario reports."""

    PASSED = 0
    FAILED = 1
    INVALID_INPUT = 2
    ERRORED = 3


def exit_code(reports: Sequence[Report]) -> ExitCode:
    """1 when a scenario failed, else 3 when runs errored, else 0. Invalid input (exit 2) never gets here:
    the CLI returns :attr:`ExitCode.INVALID_INPUT` when loading raises ``InvalidInput`` or ``ConfigError``."""
    verdicts = {report.verdict for report in reports}
    if "fail" in verdicts:
        return ExitCode.FAILED
    if "error" in verdicts:
        return ExitCode.ERRORED
    return ExitCode.PASSED
