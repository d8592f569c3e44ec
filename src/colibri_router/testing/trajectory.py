"""Trajectories: which tools a run called, step by step, compared with an expected one.

A trajectory is the list of steps that made tool calls, each step the calls of one model answer
(several calls in one answer are one parallel step). Expected steps are groups of
``{tool, args?}``; a bare name or ``{tool, args}`` is a group of one, a nested list one parallel step.

Modes:

- ``exact``: the same steps in the same order; each step's calls match its group one to one, in any
  order within the step (a parallel step ``[a, b]`` is satisfied by ``b, a`` too);
- ``in_order``: the expected steps appear in order, other calls may come between; a bare item is
  one call, a group must be satisfied within one step (after the previously matched call);
- ``unordered``: the same calls, one to one, in any order (parallel grouping ignored);
- ``contains``: every expected call matches a distinct actual call (actual ⊇ expected);
- ``within``: every actual call matches some expected call (actual ⊆ expected; repeats allowed).

Within a step, calls count in the order the model emitted them; list them as one group to accept
either order. The score of any mode is the LCS-F1 of the two call sequences (calls sorted by tool
name within a step, so that a parallel step's order does not count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from colibri_router.testing.expectations import ExpectedCall, TrajectoryMode
from colibri_router.testing.matcher import match
from colibri_router.testing.transcript import ToolCallRecord

Steps = Sequence[Sequence[ToolCallRecord]]


@dataclass(frozen=True, slots=True)
class TrajectoryCheck:
    passed: bool
    score: float
    message: str


def steps_of(calls: Sequence[ToolCallRecord]) -> list[list[ToolCallRecord]]:
    grouped: dict[int, list[ToolCallRecord]] = {}
    for call in calls:
        grouped.setdefault(call.step, []).append(call)
    return [grouped[step] for step in sorted(grouped)]


def fits(expected: ExpectedCall, call: ToolCallRecord) -> bool:
    return expected.tool == call.name and (expected.args is None or match(expected.args, call.input))


def check_trajectory(
    expected: Sequence[Sequence[ExpectedCall]], actual: Steps, mode: TrajectoryMode
) -> TrajectoryCheck:
    failure = _FAILURES[mode](expected, actual)
    score = lcs_f1(expected, actual)
    return TrajectoryCheck(passed=failure is None, score=score, message=failure or f"trajectory holds ({mode})")


def _exact(expected: Sequence[Sequence[ExpectedCall]], actual: Steps) -> str | None:
    for index, (group, step) in enumerate(zip(expected, actual, strict=False), start=1):
        if len(group) != len(step) or matching_size(group, step) != len(group):
            return f"step {index}: expected {_names(group)}, got {[c.name for c in step]}"
    if len(expected) != len(actual):
        return f"expected {len(expected)} steps with tool calls, got {len(actual)}"
    return None


def _in_order(expected: Sequence[Sequence[ExpectedCall]], actual: Steps) -> str | None:
    flat = [(step_index, call) for step_index, step in enumerate(actual) for call in step]
    position = 0  # calls before this index are used up
    for group_index, group in enumerate(expected, start=1):
        found = _next_match(group, flat, position)
        if found is None:
            after = f" after call {position}" if position else ""
            return f"expected step {group_index} {_names(group)} not found{after}"
        position = found
    return None


def _next_match(group: Sequence[ExpectedCall], flat: list[tuple[int, ToolCallRecord]], position: int) -> int | None:
    """The position just past the earliest match of ``group`` at or after ``position``, or None."""
    if len(group) == 1:
        return next((index + 1 for index in range(position, len(flat)) if fits(group[0], flat[index][1])), None)
    for step_index in sorted({step for step, _ in flat[position:]}):
        members = [index for index in range(position, len(flat)) if flat[index][0] == step_index]
        if matching_size(group, [flat[index][1] for index in members]) == len(group):
            return members[-1] + 1
    return None


def _unordered(expected: Sequence[Sequence[ExpectedCall]], actual: Steps) -> str | None:
    wanted, calls = _flat(expected), [call for step in actual for call in step]
    if len(wanted) == len(calls) and matching_size(wanted, calls) == len(wanted):
        return None
    return _multiset_difference(wanted, calls)


def _contains(expected: Sequence[Sequence[ExpectedCall]], actual: Steps) -> str | None:
    wanted, calls = _flat(expected), [call for step in actual for call in step]
    if matching_size(wanted, calls) == len(wanted):
        return None
    return _multiset_difference(wanted, calls)


def _within(expected: Sequence[Sequence[ExpectedCall]], actual: Steps) -> str | None:
    allowed = _flat(expected)
    outside = [call.name for step in actual for call in step if not any(fits(item, call) for item in allowed)]
    return f"calls outside the expected set: {outside}" if outside else None


_FAILURES: dict[TrajectoryMode, Callable[[Sequence[Sequence[ExpectedCall]], Steps], str | None]] = {
    "exact": _exact,
    "in_order": _in_order,
    "unordered": _unordered,
    "contains": _contains,
    "within": _within,
}


def _multiset_difference(wanted: list[ExpectedCall], calls: list[ToolCallRecord]) -> str:
    missing = [item.tool for item in wanted if not any(fits(item, call) for call in calls)]
    extra = [call.name for call in calls if not any(fits(item, call) for item in wanted)]
    parts = [f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else ""]
    detail = "; ".join(part for part in parts if part) or "the calls do not pair one to one (counts differ)"
    return f"expected calls {[item.tool for item in wanted]}, got {[call.name for call in calls]}: {detail}"


def matching_size(patterns: Sequence[ExpectedCall], calls: Sequence[ToolCallRecord]) -> int:
    """The largest number of patterns matched each by a distinct call (augmenting paths; patterns may overlap)."""
    owner: dict[int, int] = {}  # call index → pattern index

    def assign(pattern_index: int, seen: set[int]) -> bool:
        for call_index, call in enumerate(calls):
            if call_index in seen or not fits(patterns[pattern_index], call):
                continue
            seen.add(call_index)
            if call_index not in owner or assign(owner[call_index], seen):
                owner[call_index] = pattern_index
                return True
        return False

    return sum(assign(index, set()) for index in range(len(patterns)))


def lcs_f1(expected: Sequence[Sequence[ExpectedCall]], actual: Steps) -> float:
    """2PR/(P+R) with P = LCS/len(actual), R = LCS/len(expected); 1.0 when both are empty."""
    wanted = [item for group in expected for item in sorted(group, key=lambda item: item.tool)]
    calls = [call for step in actual for call in sorted(step, key=lambda call: call.name)]
    if not wanted and not calls:
        return 1.0
    common = _lcs_length(wanted, calls)
    if common == 0:
        return 0.0
    precision, recall = common / len(calls), common / len(wanted)
    return round(2 * precision * recall / (precision + recall), 4)


def _lcs_length(wanted: Sequence[ExpectedCall], calls: Sequence[ToolCallRecord]) -> int:
    previous = [0] * (len(calls) + 1)
    for item in wanted:
        current = [0]
        for index, call in enumerate(calls):
            current.append(previous[index] + 1 if fits(item, call) else max(previous[index + 1], current[index]))
        previous = current
    return previous[-1]


def _flat(expected: Sequence[Sequence[ExpectedCall]]) -> list[ExpectedCall]:
    return [item for group in expected for item in group]


def _names(group: Sequence[ExpectedCall]) -> list[str]:
    return [item.tool for item in group]


def describe_expected(expected: Sequence[Sequence[ExpectedCall]]) -> list[Any]:
    """The expected steps as a scenario would write them (a name, ``{tool, args}``, or a list)."""

    def item(call: ExpectedCall) -> Any:
        return call.tool if call.args is None else {"tool": call.tool, "args": call.args}

    return [item(group[0]) if len(group) == 1 else [item(call) for call in group] for group in expected]
