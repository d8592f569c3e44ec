"""The conversation loop of one run: call the model, answer its tool calls, play the next scripted turn.

System + prior messages + the first scripted user turn go to the caller with the scenario's tools and
params. Each answer is recorded as a step; the assistant turn that carries the calls is appended as
the caller returned it (calls included), then ONE user turn of
``tool_result`` blocks answering every call of the step, and the model is called again. An answer
without calls moves to the next scripted turn (switching model when the turn names one); after the
last, the run ends with ``end_turn``.

The loop writes into a :class:`RunState` as it goes, so a run stopped from outside (timeout, cancel)
keeps every step it made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from colibri_router.testing.caller import CallOrigin, ModelCall, ModelCaller, ModelCallError, ModelStep
from colibri_router.testing.scenario import Scenario, Turn
from colibri_router.testing.simulate import SimulatedRun
from colibri_router.testing.transcript import (
    ConversationResult,
    RunError,
    RunStop,
    StepRecord,
    ToolCallRecord,
    sum_usage,
)


@dataclass
class Spending:
    """Money spent across the runs of one scenario, and the cap (None: no cap). Judge calls count too."""

    cap_usd: float | None = None
    spent_usd: float = 0.0

    def exhausted(self) -> bool:
        return self.cap_usd is not None and self.spent_usd >= self.cap_usd

    def add(self, cost_usd: float | None) -> None:
        self.spent_usd += cost_usd or 0.0


@dataclass(frozen=True)
class RunPlan:
    """Everything one run needs, fixed before it starts."""

    origin_scenario: str
    model: str
    repeat: int
    system: str | None
    prior_messages: Sequence[dict[str, Any]]
    script: Sequence[Turn]
    tools: Sequence[dict[str, Any]]
    params: dict[str, Any]
    max_steps: int
    turn_files: Mapping[int, list[dict[str, Any]]] = field(default_factory=dict)  # turn number → blocks

    @classmethod
    def of(
        cls, scenario: Scenario, model: str, repeat: int, turn_files: Mapping[int, list[dict[str, Any]]] | None = None
    ) -> RunPlan:
        return cls(
            origin_scenario=scenario.name,
            model=model,
            repeat=repeat,
            system=scenario.system,
            prior_messages=scenario.prior_messages(),
            script=scenario.script,
            tools=[tool.definition() for tool in scenario.tools],
            params=scenario.params,
            max_steps=scenario.max_steps,
            turn_files=turn_files or {},
        )


@dataclass
class RunState:
    """What a run has done so far; complete when ``stop_reason`` is set."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)
    turn_ends: dict[int, int] = field(default_factory=dict)
    stop_reason: RunStop | None = None
    truncated: bool = False
    error: RunError | None = None

    def stop(self, reason: RunStop, *, truncated: bool = False) -> None:
        if self.stop_reason is None:
            self.stop_reason, self.truncated = reason, truncated

    def result(self) -> ConversationResult:
        if self.stop_reason is None:
            raise ValueError("the run has not stopped yet")
        costs = [step.cost_usd for step in self.steps]
        return ConversationResult(
            turns=self.steps,
            all_tool_calls=self.calls,
            final_text=self.steps[-1].text if self.steps else "",
            stop_reason=self.stop_reason,
            truncated=self.truncated,
            error=self.error,
            total_usage=sum_usage(step.usage for step in self.steps),
            total_latency_ms=sum(step.latency_ms for step in self.steps),
            cost_usd=sum(cost for cost in costs if cost is not None),
            unpriced_steps=sum(cost is None for cost in costs),
        )


async def play(plan: RunPlan, state: RunState, *, caller: ModelCaller, tools: SimulatedRun, spending: Spending) -> None:
    """Run the conversation of ``plan`` into ``state`` until it stops (see the module docstring)."""
    state.messages = [dict(message) for message in plan.prior_messages]
    model = plan.model
    # Prior messages ending with a user turn are answered first, before any scripted turn.
    answers_prior = bool(state.messages) and state.messages[-1].get("role") == "user"
    segments: list[tuple[int, Turn | None]] = [(0, None)] if answers_prior else []
    segments.extend(enumerate(plan.script, start=1))
    for number, turn in segments:
        if turn is not None:
            if len(state.steps) >= plan.max_steps:
                state.stop("max_steps", truncated=True)
                return
            model = turn.model or model
            files = plan.turn_files.get(number, [])
            content: str | list[dict[str, Any]] = [{"type": "text", "text": turn.user}, *files] if files else turn.user
            state.messages.append({"role": "user", "content": content})
        while True:
            if len(state.steps) >= plan.max_steps:
                state.stop("max_steps", truncated=True)
                return
            if spending.exhausted():
                state.stop("budget")
                return
            try:
                step = await caller(_call(plan, state, model))
            except ModelCallError as error:
                state.error = RunError(code=error.code, kind=error.kind, message=error.message)
                state.stop("error")
                return
            spending.add(step.cost_usd)
            _record(state, step, number, model, tools)
            if not step.tool_calls:
                break
    state.stop("end_turn")


def _call(plan: RunPlan, state: RunState, model: str) -> ModelCall:
    return ModelCall(
        model=model,
        system=plan.system,
        messages=list(state.messages),
        tools=list(plan.tools),
        params=dict(plan.params),
        origin=CallOrigin(
            scenario=plan.origin_scenario, model=plan.model, repeat=plan.repeat, step=len(state.steps) + 1
        ),
    )


def _record(state: RunState, step: ModelStep, turn: int, model: str, tools: SimulatedRun) -> None:
    index = len(state.steps) + 1
    state.steps.append(
        StepRecord(
            index=index,
            turn=turn,
            model=model,
            provider=step.provider,
            answered_by=step.model,
            text=step.text,
            stop_reason=step.stop_reason,
            usage=step.usage,
            cost_usd=step.cost_usd,
            latency_ms=step.latency_ms,
            warnings=step.warnings,
            repairs=step.repairs,
            parsed=step.parsed,
        )
    )
    state.messages.append(assistant_message(step))
    if step.tool_calls:
        results: list[dict[str, Any]] = []
        for call in step.tool_calls:
            answer = tools.answer(call)
            state.calls.append(
                ToolCallRecord(
                    step=index,
                    id=call.id,
                    name=call.name,
                    input=call.input,
                    parse_error=call.parse_error,
                    result=answer.content,
                    is_error=answer.is_error,
                    rule=answer.rule,
                    sequence_index=answer.sequence_index,
                    problem=answer.problem,
                )
            )
            content: str | list[dict[str, Any]] = list(answer.media) if answer.media else answer.content
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": content}
            if answer.is_error:
                block["is_error"] = True
            results.append(block)
        state.messages.append({"role": "user", "content": results})
    state.turn_ends[turn] = len(state.messages)


def assistant_message(step: ModelStep) -> dict[str, Any]:
    """The assistant turn to append: the caller's own, else one built from the text and the calls."""
    if step.message is not None:
        return step.message
    if not step.tool_calls:
        return {"role": "assistant", "content": step.text}
    blocks: list[dict[str, Any]] = [{"type": "text", "text": step.text}] if step.text else []
    blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in step.tool_calls)
    return {"role": "assistant", "content": blocks}
