"""Run a scenario on every model, ``repeat`` times each, concurrently, and report.

Runs execute concurrently up to a limit (the ``concurrency`` argument, else ``COLIBRI_RUN_CONCURRENCY``
read at call time, default 4). Three things stop runs early, each recorded as the run's stop reason:
the cost cap (``max_cost_usd``, over every model call of the scenario, judges included; checked
before each call, so calls already in flight may overshoot it), the timeout (``timeout_s``, wall
clock for the whole scenario), and ``stop`` (an event: set it to end every run as ``cancelled`` and
still get the report of what ran). Cancelling the task that awaits :func:`run_scenario` stops every
run and every call in flight and returns nothing, as cancellation does.

After each run, its assertions are evaluated (judges included) and ``on_progress`` hears about it,
e.g. ``"5/9 kimi repeat 2: failed trajectory"``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from colibri_router.settings import load_settings  # COLIBRI_RUN_CONCURRENCY, env file included
from colibri_router.testing.assertions import AssertionResult, Scope, evaluate
from colibri_router.testing.caller import CallOrigin, ModelCaller
from colibri_router.testing.context import ScenarioContext, load_context
from colibri_router.testing.loop import RunPlan, RunState, Spending, play
from colibri_router.testing.report import Report, RunReport, RunStatus, build_report, run_report
from colibri_router.testing.router_caller import RouterCaller  # it loads the router on its first call
from colibri_router.testing.scenario import (
    InvalidInput,
    Scenario,
    ScenarioError,
    ScenarioSource,
    load_scenario,
    with_overrides,
)
from colibri_router.testing.simulate import ToolSimulator
from colibri_router.testing.transcript import INCOMPLETE_STOPS, ConversationResult

CONCURRENCY_VARIABLE = "COLIBRI_RUN_CONCURRENCY"
DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True, slots=True)
class RunProgress:
    """One finished run: ``done`` of ``total``, and a line for a progress notification."""

    done: int
    total: int
    model: str
    repeat: int
    status: RunStatus
    message: str


ProgressCallback = Callable[[RunProgress], Awaitable[None]]


def run_concurrency(value: int | None = None) -> int:
    """``value`` when given, else ``COLIBRI_RUN_CONCURRENCY`` as the environment holds it now, else 4."""
    if value is not None:
        if value < 1:
            raise InvalidInput(f"concurrency must be at least 1, got {value}")
        return value

    return load_settings().run_concurrency


async def run_scenario(
    scenario: ScenarioSource,
    *,
    caller: ModelCaller | None = None,
    models: list[str] | None = None,
    repeat: int | None = None,
    max_steps: int | None = None,
    max_cost_usd: float | None = None,
    timeout_s: float | None = None,
    concurrency: int | None = None,
    on_progress: ProgressCallback | None = None,
    stop: anyio.Event | None = None,
    remote: bool = False,
) -> Report:
    """Run ``scenario`` (a :class:`Scenario`, a mapping, or a YAML/JSON path) and report.

    ``caller`` answers the model calls; by default the router itself (:class:`RouterCaller`).
    ``models``, ``repeat`` and ``max_steps`` replace the scenario's own (validated the same way).
    ``remote``: the caller is not on this machine, so the scenario's files and images are read only
    inside COLIBRI_HTTP_FILES_ROOT. Raises ``ScenarioError``/``InvalidInput`` or ``ConfigError``
    before running anything.
    """

    if caller is None:
        caller = RouterCaller()
    plan = with_overrides(load_scenario(scenario), models=models, repeat=repeat, max_steps=max_steps)
    if isinstance(caller, RouterCaller) and (unknown := caller.unknown_models(plan.model_names())):
        raise ScenarioError(unknown, plan.name)
    if max_cost_usd is not None and max_cost_usd < 0:
        raise InvalidInput(f"max_cost_usd must be at least 0, got {max_cost_usd}")
    if timeout_s is not None and timeout_s <= 0:
        raise InvalidInput(f"timeout_s must be more than 0, got {timeout_s}")
    context = await anyio.to_thread.run_sync(lambda: load_context(plan, remote=remote))
    execution = _Execution(
        scenario=plan,
        caller=caller,
        simulator=ToolSimulator(plan.tools, context.images),
        context=context,
        spending=Spending(cap_usd=max_cost_usd),
        limiter=anyio.CapacityLimiter(run_concurrency(concurrency)),
        deadline=anyio.current_time() + timeout_s if timeout_s is not None else float("inf"),
        stop=stop or anyio.Event(),
        on_progress=on_progress,
        total=len(plan.models) * plan.repeat,
    )
    async with anyio.create_task_group() as group:
        group.start_soon(execution.watch_stop)
        async with anyio.create_task_group() as runs:
            for number in range(1, plan.repeat + 1):
                for model in plan.models:
                    runs.start_soon(execution.run, model, number)
        group.cancel_scope.cancel()  # every run is done: the stop watcher has nothing left to stop
    return build_report(
        plan.name,
        plan.models,
        execution.results,
        execution.simulator,
        repeat=plan.repeat,
        min_pass_rate=plan.pass_criteria.min_pass_rate,
    )


@dataclass
class _Execution:
    """The shared state of one scenario's runs."""

    scenario: Scenario
    caller: ModelCaller
    simulator: ToolSimulator
    context: ScenarioContext
    spending: Spending
    limiter: anyio.CapacityLimiter
    deadline: float
    stop: anyio.Event
    on_progress: ProgressCallback | None
    total: int
    results: list[RunReport] = field(default_factory=list)
    active: set[anyio.CancelScope] = field(default_factory=set)

    @property
    def turn_numbers(self) -> dict[str, int]:
        return {turn.label: number for number, turn in enumerate(self.scenario.script, 1) if turn.label}

    async def watch_stop(self) -> None:
        await self.stop.wait()
        for scope in list(self.active):
            scope.cancel()

    async def run(self, model: str, repeat: int) -> None:
        state = RunState()
        plan = RunPlan.of(self.scenario, model, repeat, self.context.turn_files)
        holds_slot = False
        try:
            with anyio.CancelScope(deadline=self.deadline) as scope:
                self.active.add(scope)
                if self.stop.is_set():
                    scope.cancel()
                await self.limiter.acquire()
                holds_slot = True
                await play(plan, state, caller=self.caller, tools=self.simulator.start(), spending=self.spending)
            self.active.discard(scope)
            if state.stop_reason is None:  # this run's scope was cancelled: by the stop event or the deadline
                state.stop("cancelled" if self.stop.is_set() else "timeout")
            report = await self._evaluate(plan, state)
        finally:
            if holds_slot:
                self.limiter.release()
        self.results.append(report)
        if self.on_progress is not None:
            await self.on_progress(_progress(report, len(self.results), self.total))

    async def _evaluate(self, plan: RunPlan, state: RunState) -> RunReport:
        """The run's report: its assertions evaluated, unless it stopped before completing."""
        conversation = state.result()
        if conversation.stop_reason in INCOMPLETE_STOPS:
            return run_report(conversation, model=plan.model, repeat=plan.repeat, status="error", assertions=[])
        origin = CallOrigin(
            scenario=plan.origin_scenario, model=plan.model, repeat=plan.repeat, purpose="judge", step=0
        )
        evaluation = await evaluate(
            self.scenario.expect,
            lambda label: self._scope(conversation, state, label),
            system=plan.system,
            caller=self.caller,
            origin=origin,
        )
        self.spending.add(evaluation.judge_cost_usd)
        assertions = evaluation.results
        if conversation.truncated and not self.scenario.allow_truncation:
            assertions = [*assertions, _truncation(self.scenario.max_steps)]
        failed = any(not result.passed and not result.soft for result in assertions)
        status: RunStatus = "error" if evaluation.judge_error else "failed" if failed else "passed"
        return run_report(
            conversation,
            model=plan.model,
            repeat=plan.repeat,
            status=status,
            assertions=assertions,
            judge_cost_usd=round(evaluation.judge_cost_usd, 6),
            judge_error=evaluation.judge_error,
        )

    def _scope(self, conversation: ConversationResult, state: RunState, label: str | None) -> Scope:
        if label is None:
            turns, calls = conversation.turns, conversation.all_tool_calls
            return Scope("the run", turns, calls, conversation.stop_reason, state.messages)
        number = self.turn_numbers[label]
        steps = [step for step in conversation.turns if step.turn == number]
        indexes = {step.index for step in steps}
        later = any(step.turn > number for step in conversation.turns)
        return Scope(
            name=f"turn {label!r}",
            steps=steps,
            calls=[call for call in conversation.all_tool_calls if call.step in indexes],
            stop_reason="end_turn" if later else conversation.stop_reason,
            messages=state.messages[: state.turn_ends.get(number, 0)],
        )


def _truncation(max_steps: int) -> AssertionResult:
    return AssertionResult(
        type="max_steps",
        passed=False,
        score=0.0,
        expected={"max_steps": max_steps},
        actual="truncated",
        message=f"the run made {max_steps} model calls (max_steps) before the model finished; "
        "set allow_truncation: true to accept truncated runs",
    )


def _progress(report: RunReport, done: int, total: int) -> RunProgress:
    if report.status == "error":
        error = report.error or report.judge_error
        detail = f"error {error.code}" if error else f"stopped ({report.stop_reason})"
    elif report.status == "failed":
        failing = dict.fromkeys(result.type for result in report.assertions if not result.passed and not result.soft)
        detail = "failed " + ", ".join(failing)
    else:
        detail = "passed"
    return RunProgress(
        done=done,
        total=total,
        model=report.model,
        repeat=report.repeat,
        status=report.status,
        message=f"{done}/{total} {report.model} repeat {report.repeat}: {detail}",
    )
