"""What one run leaves behind: its steps (model calls), its tool calls with their simulated answers, and the
totals. The names are ``run_conversation``'s (docs/agent-testing.md): ``turns`` (one entry per model
call), ``final_text``, ``all_tool_calls``, ``total_usage``, ``total_latency_ms``.

Tool calls are kept once, in ``all_tool_calls``, each naming its ``step``; a step does not repeat them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from colibri_router.testing.caller import Repair
from colibri_router.testing.simulate import Problem

RunStop = Literal["end_turn", "max_steps", "budget", "timeout", "cancelled", "error"]
"""Why a run stopped: the model finished the script (``end_turn``), or ``max_steps`` model calls were
made first (``truncated``), or the cost cap, the timeout, a cancel or a provider error stopped it."""

INCOMPLETE_STOPS: frozenset[RunStop] = frozenset({"budget", "timeout", "cancelled", "error"})


class ToolCallRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: int = Field(description="The 1-based step (model call) that made this call.")
    id: str
    name: str
    input: dict[str, Any]
    parse_error: str | None = None
    result: str = Field(description="The simulated tool_result content sent back.")
    is_error: bool
    rule: str | None = Field(
        default=None, description="The rule that answered: `tool.responses[i]` or `tool.defaultResponse`."
    )
    sequence_index: int | None = None
    problem: Problem | None = Field(
        default=None, description="Why the call was answered with an error before any rule."
    )


class StepRecord(BaseModel):
    """One model call of a run."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="1-based.")
    turn: int = Field(description="The scripted turn being played (1-based; 0 answers the prior messages).")
    model: str = Field(description="The model asked (alias or `<provider>:<model>`).")
    provider: str | None = None
    answered_by: str | None = Field(default=None, description="The model that answered, as the provider reported it.")
    text: str
    stop_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    latency_ms: int = 0
    warnings: list[str] = Field(default_factory=list)
    repairs: list[Repair] = Field(default_factory=list)
    parsed: Any = None


class RunError(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    kind: str
    message: str


class ConversationResult(BaseModel):
    """One run's conversation and totals (with why it stopped)."""

    model_config = ConfigDict(extra="forbid")

    stop_reason: RunStop
    truncated: bool = Field(description="True when max_steps ended the run before the model finished.")
    error: RunError | None = None
    final_text: str = Field(description="The text of the last model answer.")
    total_usage: dict[str, int]
    total_latency_ms: int
    cost_usd: float = Field(description="The sum of the steps' known costs.")
    unpriced_steps: int = Field(default=0, description="Steps whose cost is unknown (not in cost_usd).")
    turns: list[StepRecord] = Field(description="One entry per model call, in order.")
    all_tool_calls: list[ToolCallRecord]


def sum_usage(usages: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for usage in usages:
        total.update(usage)
    return dict(sorted(total.items()))


def trajectory_of(calls: Iterable[ToolCallRecord]) -> list[list[str]]:
    """Tool names per step that made calls, in call order within a step."""
    steps: dict[int, list[str]] = {}
    for call in calls:
        steps.setdefault(call.step, []).append(call.name)
    return [steps[step] for step in sorted(steps)]
