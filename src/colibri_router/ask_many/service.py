"""The router_ask_many service: N router_calls under one deadline and one cancel scope, and
optionally one more for a judge. It reuses the router, the ledger and the budgets; the codecs never
know that several models were asked.

Before anything is sent: every name is resolved (a name no rule places, a model's or the judge's,
and two names for the same provider and model are refused), and when ``max_cost_usd`` or a budget
applies, the worst case of ALL the calls (each model's, plus the judge's, whose input holds every
answer at ``max_tokens``) is checked against ``max_cost_usd`` and reserved in the budgets as one
amount, in one admission: either every model is asked or none is.

Then the models run in parallel, each with its own retries and every provider rule, without the
config file's fallback (another model would answer in its place and the comparison would be off;
only a model that cannot read the turn goes to the one configured for it, router/reroute.py),
and each answer (or failure) gets its ledger row, as a router_call would. A failed model is an answer
with an ``error``; the call fails only when every model failed. The judge, with at least two answers,
gets the question and the answers under letters; the verdict never repeats them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import anyio
import httpx

from colibri_router import observability
from colibri_router.accounting import Ledger, worst_case
from colibri_router.ask_many.judge import JUDGE_SYSTEM, LABELS, agreement, judge_prompt
from colibri_router.ask_many.progress import ManyProgress, Notify
from colibri_router.ask_many.schema import (
    SUMMARY_CHARS,
    Answer,
    Failure,
    RouterAskManyInput,
    RouterAskManyResult,
    Verdict,
)
from colibri_router.callers import ToolCall, local_principal
from colibri_router.confirmation import Confirmation
from colibri_router.context import Reading
from colibri_router.errors import ColibriError, CostCapError, DeadlineError, InvalidRequestError
from colibri_router.gateway.enforce import check_chain
from colibri_router.outcomes import error_structured
from colibri_router.providers import Choice, Registry, load_registry
from colibri_router.providers.placing import UnknownModelError, refusal
from colibri_router.retry import Deadline
from colibri_router.router import Plan, plan, route
from colibri_router.router.attachments import files_read_of
from colibri_router.router.call import Call, call_from, call_of
from colibri_router.schema import Attempt, RouterCallInput, RouterCallResult
from colibri_router.session import Ask
from colibri_router.settings import Settings, load_settings
from colibri_router.store import LedgerRow, StoreError

Outcome = RouterCallResult | ColibriError


@dataclass
class _Asked:
    """One name in ``models`` (or the judge): the router_call it stands for (``args``, as a host would
    send it: what metrics and the ledger count), the call the router gets, and its outcome."""

    name: str
    args: RouterCallInput
    call: Call
    choice: Choice | None
    failure: ColibriError | None = None  # it could not even be resolved
    judging: bool = False
    planned: Plan | None = None  # the request priced before anything was sent, sent as it is
    outcome: Outcome | None = None
    row: LedgerRow | None = None


@dataclass
class _Run:
    args: RouterAskManyInput
    ledger: Ledger
    deadline: Deadline
    client: httpx.AsyncClient | None
    progress: ManyProgress
    confirmation: Confirmation
    reading: Reading | None = None  # the files every model was sent

    @property
    def settings(self) -> Settings:
        return self.ledger.settings

    @property
    def principal(self) -> str:
        return self.ledger.principal

    @property
    def warnings(self) -> list[str]:
        """The result's own warnings (a store's failures among them), in the order they arose."""
        return self.ledger.warnings


async def for_tool(args: RouterAskManyInput, call: ToolCall) -> RouterAskManyResult:
    """router_ask_many, as the tool table (:mod:`colibri_router.server.table`) calls it."""
    return await ask_many(args, principal=call.caller.name, notify=call.notify, confirm=call.confirm)


async def ask_many(
    args: RouterAskManyInput,
    *,
    principal: str | None = None,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
    confirm: Ask | None = None,
) -> RouterAskManyResult:
    """``confirm``: how to ask the user before an expensive call (None: the threshold is a cap)."""
    started = time.monotonic()
    settings = load_settings()
    # The files are read once, before anything is priced or sent: every model gets the same turn, and
    # their worst cases count it. The judge sees the question as asked, without the files' text.
    call = await call_of(args, settings)
    ledger = Ledger.open(settings, principal or local_principal())
    registry = load_registry()
    models = [_resolve(args, call, name, registry, settings) for name in args.models]
    judge = None if args.judge is None else _resolve(args, call, args.judge, registry, settings, judging=True)
    _refuse_unknown([*models, *([judge] if judge else [])])
    _refuse_duplicates(models)
    check_chain([asked.choice for asked in [*models, *([judge] if judge else [])]])  # a team member's policy
    total = len(models) + (judge is not None)
    deadline = Deadline.after(args.timeout_s or settings.timeout_s)
    run = _Run(
        args,
        ledger,
        deadline,
        client,
        ManyProgress(notify, total),
        Confirmation(confirm, settings.confirm_over_usd, deadline),
        reading=call.reading,
    )
    await _admit(run, models, judge)
    answered: list[_Asked] = []
    try:
        async with anyio.create_task_group() as beats:
            if notify is not None:
                beats.start_soon(run.progress.beat, lambda: [asked.name for asked in models if asked.outcome is None])
            async with anyio.create_task_group() as asking:
                for asked in models:
                    asking.start_soon(_ask, run, asked)
            answered = [asked for asked in models if isinstance(asked.outcome, RouterCallResult)]
            if judge is not None and len(answered) < 2:
                if answered:
                    run.warnings.append("the judge was not asked: only one model answered")
                judge = None
            if judge is not None:
                await _judge(run, judge, answered)
            beats.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            # Only the calls that started have a row: a judge never asked costs nothing.
            rows = [asked.row for asked in [*models, *([judge] if judge else [])] if asked.row]
            await ledger.write(rows, "the ledger rows")
    if not answered:
        raise _all_failed(models)
    return _result(run, models, judge, answered, started)


def _resolve(
    args: RouterCallInput, asked: Call, name: str, registry: Registry, settings: Settings, *, judging: bool = False
) -> _Asked:
    """The router_call a name becomes: router_call's own fields, copied generically (so every field
    router_call gains comes along), this model, no thread, no fallback. The files read once go to
    every model; what reading them warned of is said once, in the result, not in every answer."""
    shared = {key: getattr(args, key) for key in RouterCallInput.model_fields}
    shared.update(model=name, provider=None, thread_id=None, fallback=[], max_cost_usd=None)
    one = RouterCallInput.model_construct(**shared)
    call = asked.with_options(model=name, provider=None, fallback=(), max_cost_usd=None)
    if call.reading is not None:
        call = replace(call, reading=replace(call.reading, warnings=[]))
    try:
        choice = registry.choose(None, name, settings)
    except UnknownModelError as error:
        return _Asked(name, one, call, None, failure=error, judging=judging)  # refused with the others: see below
    except ColibriError as error:
        if judging:
            raise  # a judge that cannot be named is the caller's mistake: nothing is asked
        return _Asked(name, one, call, None, failure=error)
    return _Asked(name, one, call, choice, judging=judging)


def _refuse_unknown(asked: Sequence[_Asked]) -> None:
    """A model or judge no rule places refuses the whole call before any model is asked, every such
    name in one error: a typo would otherwise reach the default provider, or fail the verdict only
    after every model was paid for."""
    unknown = [item.failure for item in asked if isinstance(item.failure, UnknownModelError)]
    if unknown:
        raise refusal(unknown)


def _refuse_duplicates(models: Sequence[_Asked]) -> None:
    seen: dict[tuple[str, str], str] = {}
    for asked in models:
        if asked.choice is None:
            continue
        key = (asked.choice.provider.name, asked.choice.model)
        if key in seen:
            raise InvalidRequestError(
                f"`models` names {key[0]}:{key[1]} twice ({seen[key]!r} and {asked.name!r}); each model is asked once"
            )
        seen[key] = asked.name


async def _admit(run: _Run, models: Sequence[_Asked], judge: _Asked | None) -> None:
    """The worst case of every call this one will make, against max_cost_usd, the user's confirmation
    and the budgets, before any is sent, reserved in the budgets as one amount. Each model's request
    is priced as the router plans it, and that plan is what is sent."""
    args = run.args
    if args.max_cost_usd is None and not run.ledger.budgeted and not run.confirmation.active:
        return  # nothing to check: no price lookup on the plain path
    costs: list[tuple[str, float | None]] = []
    answers_tokens = 0
    for asked in models:
        if asked.choice is None:
            continue
        try:
            asked.planned = await plan(asked.call, asked.choice, run.settings, reroute=True)
        except ColibriError:
            continue  # refused before sending: it costs nothing
        costs.append((asked.name, worst_case(asked.planned.choice, asked.planned.request)))  # rerouted: its model
        answers_tokens += asked.planned.request.max_tokens
    if judge is not None and judge.choice is not None:
        # The judge's input holds every answer, each at most max_tokens long: its request is priced
        # without them, and their worst case added.
        priced = await plan(call_from(_judge_call(run, judge.name, [])), judge.choice, run.settings)
        costs.append((judge.name, worst_case(judge.choice, priced.request, answers_tokens)))
    unpriced = [name for name, cost in costs if cost is None]
    if unpriced:
        run.warnings.append(
            f"no price known for {', '.join(unpriced)}: the cost cap and budgets could not count "
            f"{'it' if len(unpriced) == 1 else 'them'}"
        )
    worst = sum(cost for _, cost in costs if cost is not None)
    if args.max_cost_usd is not None and worst > args.max_cost_usd:
        parts = ", ".join(f"{name} ${cost:.6f}" for name, cost in costs if cost is not None)
        raise CostCapError(
            f"asking every model{' and the judge' if judge else ''} could cost up to ${worst:.6f} ({parts}), "
            f"above max_cost_usd ${args.max_cost_usd:g}; nothing was sent"
        )
    await run.confirmation.check(costs)
    try:
        await run.ledger.reserve(worst)
    except StoreError as error:
        run.ledger.store_failed("the budget check", error)


async def _ask(run: _Run, asked: _Asked) -> None:
    """One model, to its outcome and ledger row; a failure is the answer's, never the call's."""
    at = datetime.now(UTC)
    started = time.monotonic()
    # Each model asked counts in /metrics and traces as the router_call it is.
    watch = observability.routed_call(run.principal, asked.args)
    try:
        if asked.failure is not None:
            raise asked.failure
        remaining = run.deadline.remaining()
        if remaining <= 0:
            raise DeadlineError("the call's deadline passed before this model was asked").about(None, asked.name)
        call = asked.call.with_options(timeout_s=remaining)
        # Each model as a router_call without a fallback of the caller's: one that cannot read the turn
        # goes to the configured model that can, and its answer's warnings say so. The judge is asked
        # as named: a verdict has no warnings to say otherwise.
        routed = await route(
            call, client=run.client, settings=run.settings, planned=asked.planned, reroute=not asked.judging
        )
        asked.outcome = routed.result
    except ColibriError as error:
        asked.outcome = error.about(None, asked.name)
    finally:
        outcome = asked.outcome
        watch.finished(
            outcome if isinstance(outcome, RouterCallResult) else None,
            outcome if isinstance(outcome, ColibriError) else None,
        )
        asked.row = run.ledger.row(
            asked.args,
            outcome if isinstance(outcome, RouterCallResult) else None,
            outcome if isinstance(outcome, ColibriError) else None,
            started=at,
        )
    outcome = asked.outcome
    verb = "answered" if isinstance(outcome, RouterCallResult) else f"failed ({getattr(outcome, 'kind', '?')})"
    who = f"judge {asked.name}" if asked.judging else asked.name
    await run.progress.finished(f"{who} {verb}", time.monotonic() - started)


async def _judge(run: _Run, judge: _Asked, answered: Sequence[_Asked]) -> None:
    assert judge.choice is not None  # a judge that cannot be resolved is refused before anything is sent
    results = [asked.outcome for asked in answered if isinstance(asked.outcome, RouterCallResult)]
    judge.args = _judge_call(run, judge.name, results)
    judge.call = call_from(judge.args)
    await _ask(run, judge)


def _judge_call(run: _Run, name: str, results: Sequence[RouterCallResult]) -> RouterCallInput:
    """The judge's router_call: the question and the answers under letters (none yet when it is priced)."""
    question = judge_prompt(run.args.conversation(), run.args.system_prompt, results, run.args.judge_instructions)
    return RouterCallInput.model_validate(
        {"prompt": question, "model": name, "system_prompt": JUDGE_SYSTEM, "max_tokens": run.args.max_tokens}
        | {"fallback": [], "response_schema": run.args.judge_schema}
    )


def _all_failed(models: Sequence[_Asked]) -> ColibriError:
    """Every model failed: the first failure, saying what each one's was, with one attempt per model."""
    errors = [asked.outcome for asked in models if isinstance(asked.outcome, ColibriError)]
    first = errors[0]
    first.message = "every model failed: " + "; ".join(
        f"{asked.name}: {error.code}: {error.message}" for asked, error in zip(models, errors, strict=True)
    )
    first.attempts = tuple(
        Attempt(
            provider=error.provider or "",
            model=error.model or asked.name,
            outcome=error.code,
            kind=error.kind,
            latency_ms=asked.row.latency_ms if asked.row else 0,
        ).model_dump()
        for asked, error in zip(models, errors, strict=True)
    )
    return first


def _result(
    run: _Run, models: Sequence[_Asked], judge: _Asked | None, answered: Sequence[_Asked], started: float
) -> RouterAskManyResult:
    full = run.args.full
    answers = [_answer(asked, full) for asked in models]
    costs = [answer.cost_usd or 0.0 for answer in answers]
    verdict = None
    if judge is not None:
        verdict = _verdict(judge, {label: asked.name for label, asked in zip(LABELS, answered, strict=False)})
        costs.append(verdict.cost_usd or 0.0)
    return RouterAskManyResult(
        answers=answers,
        total_cost_usd=round(math.fsum(costs), 9),
        wall_ms=round((time.monotonic() - started) * 1000),
        verdict=verdict,
        files_read=files_read_of(run.reading),
        warnings=[*(run.reading.warnings if run.reading else ()), *run.warnings] or None,
    )


def _answer(asked: _Asked, full: bool) -> Answer:
    outcome = asked.outcome
    if not isinstance(outcome, RouterCallResult):
        error = outcome if outcome is not None else asked.failure
        assert error is not None
        return Answer(
            model=error.model or asked.name,
            provider=error.provider or "",
            latency_ms=asked.row.latency_ms if asked.row else 0,
            error=_detail(error),
        )
    content = outcome.content
    if not full and len(content) > SUMMARY_CHARS:
        content = content[:SUMMARY_CHARS] + "…"
    return Answer(
        model=outcome.model,
        provider=outcome.provider,
        content=content,
        tool_calls=outcome.tool_calls or None,
        thinking=outcome.thinking if full else None,
        stop_reason=outcome.stop_reason,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        cached_tokens=outcome.cached_tokens or None,
        cache_write_tokens=outcome.cache_write_tokens or None,
        reasoning_tokens=outcome.reasoning_tokens or None,
        cost_usd=outcome.cost_usd,
        latency_ms=outcome.latency_ms,
        warnings=outcome.warnings or None,
        parsed=outcome.parsed,
    )


def _verdict(judge: _Asked, labels: dict[str, str]) -> Verdict:
    outcome = judge.outcome
    if not isinstance(outcome, RouterCallResult):
        assert outcome is not None
        return Verdict(model=outcome.model or judge.name, labels=labels, error=_detail(outcome))
    score, content = agreement(outcome.content)
    return Verdict(
        model=outcome.model,
        content=content,
        agreement=score,
        cost_usd=outcome.cost_usd,
        labels=labels,
        parsed=outcome.parsed,
    )


def _detail(error: ColibriError) -> Failure:
    return Failure.model_validate(error_structured(error)["error"])
