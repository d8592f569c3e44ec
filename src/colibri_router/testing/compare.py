"""Where models part: each model's most frequent trajectory against the reference model's (the first).

For every other model: the first step at which the two trajectories differ (1-based, over the steps
that called tools), the tools only that model called in any run, the reference's tools it never
called, and, for tools both called in their typical runs, how the arguments of the first such call
differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from colibri_router.testing.matcher import differences

if TYPE_CHECKING:
    from colibri_router.testing.report import RunReport

Signature = tuple[tuple[str, ...], ...]


class ArgumentDifference(BaseModel):
    tool: str
    path: str = Field(description="Where the arguments differ (empty: the whole input).")
    reference: Any = Field(description="The reference model's value (null when it had none).")
    value: Any = Field(description="This model's value (null when it had none).")


class ModelComparison(BaseModel):
    model: str
    reference: str
    same_trajectory: bool
    diverges_at: int | None = Field(description="The first step (1-based) where the typical trajectories differ.")
    reference_step: list[str] | None = Field(description="The reference's tools at that step (null: it had ended).")
    step: list[str] | None = Field(description="This model's tools at that step (null: it had ended).")
    only_this_model: list[str] = Field(description="Tools this model called that the reference never did.")
    missed: list[str] = Field(description="Tools the reference called that this model never did.")
    argument_differences: list[ArgumentDifference]


def typical_run(runs: Sequence[RunReport]) -> RunReport | None:
    """The first run with the most frequent trajectory, among scored runs (all runs when none is scored)."""
    pool = [run for run in runs if run.status != "error"] or list(runs)
    if not pool:
        return None
    counts = Counter(trajectory_signature(run) for run in pool)
    typical, _ = counts.most_common(1)[0]
    return next(run for run in pool if trajectory_signature(run) == typical)


def compare_models(by_model: Mapping[str, Sequence[RunReport]]) -> list[ModelComparison]:
    models = list(by_model)
    if len(models) < 2:
        return []
    reference = models[0]
    return [_compare(reference, by_model[reference], model, by_model[model]) for model in models[1:]]


def _compare(
    reference: str, reference_runs: Sequence[RunReport], model: str, runs: Sequence[RunReport]
) -> ModelComparison:
    base, other = typical_run(reference_runs), typical_run(runs)
    base_steps = base.trajectory if base else []
    steps = other.trajectory if other else []
    diverges_at = next(
        (index for index, (a, b) in enumerate(zip(base_steps, steps, strict=False), start=1) if sorted(a) != sorted(b)),
        None,
    )
    if diverges_at is None and len(base_steps) != len(steps):
        diverges_at = min(len(base_steps), len(steps)) + 1
    reference_tools = _tools(reference_runs)
    tools = _tools(runs)
    return ModelComparison(
        model=model,
        reference=reference,
        same_trajectory=diverges_at is None,
        diverges_at=diverges_at,
        reference_step=_at(base_steps, diverges_at),
        step=_at(steps, diverges_at),
        only_this_model=sorted(tools - reference_tools),
        missed=sorted(reference_tools - tools),
        argument_differences=_argument_differences(base, other),
    )


def _argument_differences(base: RunReport | None, other: RunReport | None) -> list[ArgumentDifference]:
    if base is None or other is None:
        return []
    first_base = _first_inputs(base)
    first_other = _first_inputs(other)
    found: list[ArgumentDifference] = []
    for tool, reference_input in first_base.items():
        if tool not in first_other:
            continue
        for difference in differences(reference_input, first_other[tool], exact=True):
            found.append(
                ArgumentDifference(
                    tool=tool, path=difference.path, reference=difference.expected, value=difference.actual
                )
            )
    return found


def _first_inputs(run: RunReport) -> dict[str, dict[str, Any]]:
    inputs: dict[str, dict[str, Any]] = {}
    for call in run.all_tool_calls:
        inputs.setdefault(call.name, call.input)
    return inputs


def trajectory_signature(run: RunReport) -> Signature:
    """A run's trajectory with each parallel step's tools sorted: the order of parallel calls does not count."""
    return tuple(tuple(sorted(step)) for step in run.trajectory)


def _tools(runs: Sequence[RunReport]) -> set[str]:
    return {call.name for run in runs for call in run.all_tool_calls}


def _at(steps: Sequence[Sequence[str]], index: int | None) -> list[str] | None:
    if index is None or index > len(steps):
        return None
    return list(steps[index - 1])
