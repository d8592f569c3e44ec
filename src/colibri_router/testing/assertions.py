"""Assertions evaluated on one run, each giving ``{type, label, passed, score, expected, actual, message}``.

An assertion looks at its scope: the whole run, or the steps of one scripted turn (``turn``). A
scope with nothing in it (a turn the run never reached, no final answer to read) fails saying so.
``soft`` assertions are reported with the rest but never fail the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from colibri_router.testing.caller import CallOrigin, ModelCaller, ModelCallError
from colibri_router.testing.expectations import (
    ArgsValid,
    Assertion,
    Budget,
    CleanProtocol,
    FinalText,
    Judge,
    NoToolCalls,
    Parsed,
    StopReason,
    ToolCalled,
    ToolNotCalled,
    Trajectory,
)
from colibri_router.testing.judge import judge_call, parse_verdict
from colibri_router.testing.matcher import differences, match
from colibri_router.testing.trajectory import check_trajectory, describe_expected, steps_of
from colibri_router.testing.transcript import RunError, RunStop, StepRecord, ToolCallRecord, trajectory_of


class AssertionResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    label: str | None = None
    passed: bool
    score: float
    expected: Any = None
    actual: Any = None
    message: str
    soft: bool = False


@dataclass(frozen=True)
class Scope:
    """What an assertion sees: the steps and calls of the run or of one turn, and how that ended."""

    name: str
    steps: Sequence[StepRecord]
    calls: Sequence[ToolCallRecord]
    stop_reason: RunStop
    messages: Sequence[dict[str, Any]]

    @property
    def final_text(self) -> str | None:
        return self.steps[-1].text if self.steps else None


@dataclass(frozen=True)
class Evaluation:
    results: list[AssertionResult]
    judge_cost_usd: float
    judge_error: RunError | None


async def evaluate(
    assertions: Sequence[Assertion],
    scope_for: Callable[[str | None], Scope],
    *,
    system: str | None,
    caller: ModelCaller,
    origin: CallOrigin,
) -> Evaluation:
    """Every assertion on its scope; judges call ``caller`` (their cost and any failure reported apart),
    under ``origin`` with ``step`` set to the judge's index in the list."""
    results: list[AssertionResult] = []
    judge_cost, judge_error = 0.0, None
    for index, assertion in enumerate(assertions):
        scope = scope_for(assertion.turn)
        if isinstance(assertion, Judge):
            judge_origin = origin.model_copy(update={"step": index})
            result, cost, error = await _judge(assertion, scope, system, caller, judge_origin)
            judge_cost += cost
            judge_error = judge_error or error
        else:
            result = check(assertion, scope)
        results.append(result)
    return Evaluation(results=results, judge_cost_usd=judge_cost, judge_error=judge_error)


def check(assertion: Assertion, scope: Scope) -> AssertionResult:
    """One assertion that needs no model call, on its scope."""
    if isinstance(assertion, Judge):
        raise TypeError("a judge assertion needs a model call: use evaluate()")
    if not scope.steps:
        return _result(assertion, False, f"nothing to check: {scope.name} has no model answer")
    match assertion:
        case ToolCalled():
            return _tool_called(assertion, scope)
        case ToolNotCalled():
            return _tool_not_called(assertion, scope)
        case NoToolCalls():
            return _no_tool_calls(assertion, scope)
        case Trajectory():
            return _trajectory(assertion, scope)
        case ArgsValid():
            return _args_valid(assertion, scope)
        case FinalText():
            return _final_text(assertion, scope)
        case Parsed():
            return _parsed(assertion, scope)
        case StopReason():
            return _stop_reason(assertion, scope)
        case Budget():
            return _budget(assertion, scope)
        case CleanProtocol():
            return _clean_protocol(assertion, scope)


def _result(
    assertion: Assertion,
    passed: bool,
    message: str,
    expected: Any = None,
    actual: Any = None,
    *,
    score: float | None = None,
) -> AssertionResult:
    return AssertionResult(
        type=assertion.type,
        label=assertion.label,
        passed=passed,
        score=float(passed) if score is None else score,
        expected=expected,
        actual=actual,
        message=message,
        soft=assertion.soft,
    )


def _matching(
    calls: Sequence[ToolCallRecord], tool: str, args: dict[str, Any] | None, exact: bool
) -> list[ToolCallRecord]:
    return [c for c in calls if c.name == tool and (args is None or match(args, c.input, exact=exact))]


def _tool_called(a: ToolCalled, scope: Scope) -> AssertionResult:
    exact = a.args_mode == "exact"
    named = [call for call in scope.calls if call.name == a.tool]
    count = len(_matching(scope.calls, a.tool, a.args, exact))
    expected = {"tool": a.tool, "args": a.args, "times": a.times.describe()}
    actual: dict[str, Any] = {"matching_calls": count, "calls_to_tool": len(named)}
    with_args = " with matching arguments" if a.args is not None else ""
    message = f"{a.tool} called {count} time(s){with_args}, expected {a.times.describe()}"
    if a.times.allows(count):
        return _result(a, True, message, expected, actual)
    if not named:
        others = sorted({call.name for call in scope.calls})
        message += f"; in {scope.name} the model called {others or 'no tool'}"
    elif a.args is not None and count < a.times.min:
        closest = min(named, key=lambda call: len(differences(a.args, call.input, exact=exact)))
        diffs = differences(a.args, closest.input, exact=exact)
        found = [{"path": d.path, "expected": d.expected, "actual": d.actual, "reason": d.reason} for d in diffs]
        actual["closest"] = {"step": closest.step, "input": closest.input, "differences": found}
        message += f"; closest call (step {closest.step}): " + "; ".join(d.describe() for d in diffs)
    return _result(a, False, message, expected, actual)


def _tool_not_called(a: ToolNotCalled, scope: Scope) -> AssertionResult:
    found = _matching(scope.calls, a.tool, a.args, a.args_mode == "exact")
    expected = {"tool": a.tool, "args": a.args}
    if not found:
        return _result(a, True, f"{a.tool} not called in {scope.name}", expected, {"calls": 0})
    steps = ", ".join(str(call.step) for call in found)
    return _result(
        a, False, f"{a.tool} was called {len(found)} time(s) (steps {steps})", expected, {"calls": len(found)}
    )


def _no_tool_calls(assertion: NoToolCalls, scope: Scope) -> AssertionResult:
    names = [call.name for call in scope.calls]
    message = f"no tool calls in {scope.name}" if not names else f"the model called {names}"
    return _result(assertion, not names, message, [], names)


def _trajectory(a: Trajectory, scope: Scope) -> AssertionResult:
    outcome = check_trajectory(a.steps, steps_of(list(scope.calls)), a.mode)
    expected = {"mode": a.mode, "steps": describe_expected(a.steps)}
    return _result(a, outcome.passed, outcome.message, expected, trajectory_of(scope.calls), score=outcome.score)


def _args_valid(a: ArgsValid, scope: Scope) -> AssertionResult:
    calls = [call for call in scope.calls if a.tool is None or call.name == a.tool]
    if not calls:
        which = f"calls to {a.tool}" if a.tool else "tool calls"
        return _result(a, False, f"nothing to check: no {which} in {scope.name}")
    invalid = [call for call in calls if call.problem in ("unknown_tool", "unparseable_arguments", "invalid_arguments")]
    actual = [
        {"step": call.step, "tool": call.name, "problem": call.problem, "detail": call.result} for call in invalid
    ]
    score = round(1 - len(invalid) / len(calls), 4)
    message = (
        f"all {len(calls)} call(s) valid"
        if not invalid
        else "; ".join(f"step {call.step} {call.name}: {call.result}" for call in invalid)
    )
    return _result(a, not invalid, message, "arguments valid against input_schema", actual, score=score)


def _parsed(a: Parsed, scope: Scope) -> AssertionResult:
    value = scope.steps[-1].parsed
    if "equals" in a.model_fields_set:
        ok = value == a.equals
        return _result(a, ok, "parsed " + ("equals" if ok else "differs from") + " the expected value", a.equals, value)
    expected = a.contains or {}
    missing = [key for key, item in expected.items() if not isinstance(value, dict) or value.get(key) != item]
    message = "parsed holds every expected key" if not missing else f"parsed differs at: {', '.join(missing)}"
    return _result(a, not missing, message, expected, value)


def _final_text(a: FinalText, scope: Scope) -> AssertionResult:
    text = scope.final_text or ""
    folded = text.casefold()
    checks: list[tuple[bool, str]] = [
        *((part in text, f"contains {part!r}") for part in a.contains),
        *((part.casefold() in folded, f"contains {part!r} (any case)") for part in a.icontains),
        *((part not in text, f"does not contain {part!r}") for part in a.not_contains),
    ]
    if a.regex is not None:
        checks.append((re.search(a.regex, text) is not None, f"matches /{a.regex}/"))
    if a.equals is not None:
        checks.append((text.strip() == a.equals.strip(), f"equals {a.equals!r}"))
    if a.max_chars is not None:
        checks.append((len(text) <= a.max_chars, f"is at most {a.max_chars} characters (has {len(text)})"))
    failed = [what for ok, what in checks if not ok]
    score = round(sum(ok for ok, _ in checks) / len(checks), 4)
    criteria = {"contains", "icontains", "not_contains", "regex", "equals", "max_chars"}
    expected = a.model_dump(include=criteria, exclude_defaults=True)
    message = "the final text " + ("meets every criterion" if not failed else "fails: " + "; ".join(failed))
    return _result(a, not failed, message, expected, text, score=score)


def _stop_reason(a: StopReason, scope: Scope) -> AssertionResult:
    passed = scope.stop_reason in a.accepted
    message = f"{scope.name} stopped with {scope.stop_reason}" + ("" if passed else f", expected one of {a.accepted}")
    return _result(a, passed, message, a.accepted, scope.stop_reason)


def _budget(a: Budget, scope: Scope) -> AssertionResult:
    measured = {
        "max_steps": len(scope.steps),
        "max_tool_calls": len(scope.calls),
        "max_cost_usd": round(sum(step.cost_usd or 0.0 for step in scope.steps), 6),
        "max_latency_ms": sum(step.latency_ms for step in scope.steps),
    }
    limits = a.limits()
    over = [
        f"{name.removeprefix('max_')} {measured[name]} > {limit}"
        for name, limit in limits.items()
        if measured[name] > limit
    ]
    actual = {name.removeprefix("max_"): measured[name] for name in limits}
    score = round(1 - len(over) / len(limits), 4)
    message = f"within budget in {scope.name}" if not over else "over budget: " + "; ".join(over)
    return _result(a, not over, message, limits, actual, score=score)


def _clean_protocol(assertion: CleanProtocol, scope: Scope) -> AssertionResult:
    # A repaired answer shape (output_repaired) is not tool calling: only the tool-calling repairs count.
    repaired: dict[int, list[str]] = {
        step.index: kinds for step in scope.steps if (kinds := [str(r) for r in step.repairs if r != "output_repaired"])
    }
    for call in scope.calls:
        if call.parse_error is not None and "arguments_unparseable" not in repaired.get(call.step, []):
            repaired.setdefault(call.step, []).append("arguments_unparseable")
    if not repaired:
        return _result(assertion, True, f"no tool-calling repairs in {scope.name}", [], {})
    detail = "; ".join(f"step {step}: {', '.join(kinds)}" for step, kinds in sorted(repaired.items()))
    actual = {str(step): kinds for step, kinds in sorted(repaired.items())}
    return _result(assertion, False, f"the router repaired the model's tool calling: {detail}", [], actual)


async def _judge(
    assertion: Judge, scope: Scope, system: str | None, caller: ModelCaller, origin: CallOrigin
) -> tuple[AssertionResult, float, RunError | None]:
    expected = {"rubric": assertion.rubric, "threshold": assertion.threshold, "model": assertion.model}
    if not scope.steps:
        return (
            _result(assertion, False, f"nothing to check: {scope.name} has no model answer", expected),
            0.0,
            None,
        )
    try:
        step = await caller(judge_call(assertion, system, scope.messages, origin))
    except ModelCallError as error:
        failure = RunError(code=error.code, kind=error.kind, message=f"judge call failed: {error.message}")
        return _result(assertion, False, failure.message, expected, score=0.0), 0.0, failure
    cost = step.cost_usd or 0.0
    verdict = parse_verdict(step.text)
    if verdict is None:
        message = f"the judge's answer holds no score between 0 and 1: {step.text[:200]!r}"
        return _result(assertion, False, message, expected, step.text, score=0.0), cost, None
    passed = verdict.score >= assertion.threshold
    comparison = ">=" if passed else "<"
    message = f"judged {verdict.score:g} {comparison} {assertion.threshold:g}: {verdict.reason}"
    actual = {"score": verdict.score, "reason": verdict.reason}
    return _result(assertion, passed, message, expected, actual, score=verdict.score), cost, None
