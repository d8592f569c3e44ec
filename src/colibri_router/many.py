"""The router_ask_many service: N router_calls under one deadline and one cancel scope, and
optionally one more for a judge. It reuses the router, the ledger and the budgets; the codecs never
know that several models were asked.

Before anything is sent: every name is resolved (a name no rule places, a model's or the judge's,
and two names for the same provider and model are refused), and when ``max_cost_usd`` or a budget
applies, the worst case of ALL the calls (each model's, plus the judge's, whose input holds every
answer at ``max_tokens``) is checked against ``max_cost_usd`` and reserved in the budgets as one
amount, in one admission: either every model is asked or none is.

Then the models run in parallel, each with its own retries and every provider rule, without the
config file's fallback (another model would answer in its place and the comparison would be off),
and each answer (or failure) gets its ledger row, as a router_call would. A failed model is an answer
with an ``error``; the call fails only when every model failed. The judge, with at least two answers,
gets the question and the answers under letters; the verdict never repeats them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import anyio
import httpx

from colibri_router import observability
from colibri_router.attachments import files_read_of, with_files
from colibri_router.callers import local_principal
from colibri_router.calls import Accounting, estimated_input_tokens
from colibri_router.context import Reading
from colibri_router.conversation import CompletionRequest, Message, Text
from colibri_router.errors import ColibriError, ConfigError, CostCapError, DeadlineError, InvalidRequestError
from colibri_router.logs import get_logger
from colibri_router.many_judge import JUDGE_SYSTEM, LABELS, agreement, judge_prompt
from colibri_router.many_progress import ManyProgress, Notify
from colibri_router.outcomes import error_structured
from colibri_router.pipeline import DEFAULT_MAX_TOKENS
from colibri_router.pricing import worst_case_cost
from colibri_router.providers import Choice, Registry, load_registry
from colibri_router.providers.placing import UnknownModelError, refusal
from colibri_router.retry import Deadline
from colibri_router.router import build_request, route
from colibri_router.schema import Attempt, RouterCallInput, RouterCallResult
from colibri_router.schema_many import SUMMARY_CHARS, Answer, Failure, RouterAskManyInput, RouterAskManyResult, Verdict
from colibri_router.settings import Settings, load_settings
from colibri_router.store import BudgetLimits, LedgerRow, Reservation, Store, StoreError, shared_store, usd_to_micro

Outcome = RouterCallResult | ColibriError


@dataclass
class _Asked:
    """One name in ``models`` (or the judge): the router_call it becomes, and its outcome."""

    name: str
    call: RouterCallInput
    choice: Choice | None
    failure: ColibriError | None = None  # it could not even be resolved
    judging: bool = False
    outcome: Outcome | None = None
    row: LedgerRow | None = None


@dataclass
class _Run:
    args: RouterAskManyInput
    settings: Settings
    store: Store | None
    principal: str
    deadline: Deadline
    client: httpx.AsyncClient | None
    progress: ManyProgress
    reading: Reading | None = None  # the files every model was sent
    warnings: list[str] = field(default_factory=list)


async def ask_many(
    args: RouterAskManyInput,
    *,
    principal: str | None = None,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
) -> RouterAskManyResult:
    started = time.monotonic()
    settings = load_settings()
    # The files are read once, before anything is priced or sent: every model gets the same turn, and
    # their worst cases count it. The judge sees the question as asked, without the files' text.
    expanded = await with_files(args, settings)
    store = shared_store(settings)
    limits = BudgetLimits.from_usd(
        daily=settings.budget_daily_usd,
        monthly=settings.budget_monthly_usd,
        daily_per_principal=settings.budget_daily_usd_per_user,
    )
    if store is None and limits.by_scope():
        raise ConfigError("COLIBRI_BUDGET_* need the store (the ledger), and COLIBRI_STORE is off")
    registry = load_registry()
    models = [_resolve(expanded, name, registry, settings) for name in args.models]
    judge = None if args.judge is None else _resolve(args, args.judge, registry, settings, judging=True)
    _refuse_unknown([*models, *([judge] if judge else [])])
    _refuse_duplicates(models)
    total = len(models) + (judge is not None)
    run = _Run(
        args,
        settings,
        store,
        principal or local_principal(),
        Deadline.after(args.timeout_s or settings.timeout_s),
        client,
        ManyProgress(notify, total),
        reading=expanded.reading,
    )
    reservation = await _admit(run, models, judge, limits)
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
            await _write_ledger(
                run, [asked for asked in [*models, *([judge] if judge else [])] if asked.row], reservation
            )
    if not answered:
        raise _all_failed(models)
    return _result(run, models, judge, answered, started)


def _resolve(
    args: RouterCallInput, name: str, registry: Registry, settings: Settings, *, judging: bool = False
) -> _Asked:
    """The router_call a name becomes: router_call's own fields, copied generically (so every field
    router_call gains comes along), this model, no thread, no fallback. Files already read stay read;
    what reading them warned of is said once, in the result, not in every answer."""
    shared = {key: getattr(args, key) for key in RouterCallInput.model_fields}
    shared.update(model=name, provider=None, thread_id=None, fallback=[], max_cost_usd=None)
    call = RouterCallInput.model_construct(**shared)
    if args.reading is not None:
        call = call.with_reading(list(call.messages or ()), replace(args.reading, warnings=[]))
    try:
        choice = registry.choose(None, name, settings)
    except UnknownModelError as error:
        return _Asked(name, call, None, failure=error, judging=judging)  # refused with the others: see below
    except ColibriError as error:
        if judging:
            raise  # a judge that cannot be named is the caller's mistake: nothing is asked
        return _Asked(name, call, None, failure=error)
    return _Asked(name, call, choice, judging=judging)


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


async def _admit(run: _Run, models: Sequence[_Asked], judge: _Asked | None, limits: BudgetLimits) -> Reservation | None:
    """The worst case of every call this one will make, against max_cost_usd and the budgets, before
    any is sent. Returns the budget reservation (one, for the whole amount)."""
    args = run.args
    if args.max_cost_usd is None and not limits.by_scope():
        return None  # nothing to check: no price lookup on the plain path
    max_tokens = args.max_tokens or DEFAULT_MAX_TOKENS
    costs: list[tuple[str, float | None]] = []
    for asked in models:
        if asked.choice is None:
            continue
        try:
            request, _ = build_request(asked.call, asked.choice.model)
        except ColibriError:
            continue  # refused before sending: it costs nothing
        costs.append((asked.name, _worst(asked.choice, request)))
    if judge is not None and judge.choice is not None:
        # The judge's input holds every answer, each at most max_tokens long.
        request = _judge_request(run, judge.choice)
        extra = max_tokens * len(costs)
        costs.append((judge.name, _worst(judge.choice, request, extra)))
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
    if run.store is None or not limits.by_scope():
        return None
    try:
        return await run.store.reserve_budget(run.principal, usd_to_micro(worst), limits)
    except StoreError as error:
        _store_failed(run, "the budget check", error)
        return None


def _worst(choice: Choice, request: CompletionRequest, extra_input_tokens: int = 0) -> float | None:
    return worst_case_cost(
        choice.provider.price_provider,
        choice.model,
        estimated_input_tokens(request) + extra_input_tokens,
        request.max_tokens,
        local=choice.provider.local,
    )


async def _ask(run: _Run, asked: _Asked) -> None:
    """One model, to its outcome and ledger row; a failure is the answer's, never the call's."""
    accounting = Accounting(asked.call, run.settings, run.store, run.principal, BudgetLimits())
    started = time.monotonic()
    # Each model asked counts in /metrics and traces as the router_call it is.
    watch = observability.routed_call(run.principal, asked.call)
    try:
        if asked.failure is not None:
            raise asked.failure
        remaining = run.deadline.remaining()
        if remaining <= 0:
            raise DeadlineError("the call's deadline passed before this model was asked").about(None, asked.name)
        call = asked.call.model_copy(update={"timeout_s": remaining})
        asked.outcome = await route(call, client=run.client, settings=run.settings)
    except ColibriError as error:
        asked.outcome = error.about(None, asked.name)
    finally:
        outcome = asked.outcome
        watch.finished(
            outcome if isinstance(outcome, RouterCallResult) else None,
            outcome if isinstance(outcome, ColibriError) else None,
        )
        asked.row = accounting.row(
            outcome if isinstance(outcome, RouterCallResult) else None,
            outcome if isinstance(outcome, ColibriError) else None,
        )
    outcome = asked.outcome
    verb = "answered" if isinstance(outcome, RouterCallResult) else f"failed ({getattr(outcome, 'kind', '?')})"
    who = f"judge {asked.name}" if asked.judging else asked.name
    await run.progress.finished(f"{who} {verb}", time.monotonic() - started)


async def _judge(run: _Run, judge: _Asked, answered: Sequence[_Asked]) -> None:
    assert judge.choice is not None  # a judge that cannot be resolved is refused before anything is sent
    results = [asked.outcome for asked in answered if isinstance(asked.outcome, RouterCallResult)]
    question = judge_prompt(run.args.conversation(), run.args.system_prompt, results, run.args.judge_instructions)
    judge.call = RouterCallInput.model_validate(
        {"prompt": question, "model": judge.name, "system_prompt": JUDGE_SYSTEM, "max_tokens": run.args.max_tokens}
        | {"fallback": []}
    )
    await _ask(run, judge)


def _judge_request(run: _Run, choice: Choice) -> CompletionRequest:
    """The judge's request without the answers (their worst case is counted apart)."""
    prompt = judge_prompt(run.args.conversation(), run.args.system_prompt, [], run.args.judge_instructions)
    return CompletionRequest(
        model=choice.model,
        messages=(Message(role="user", parts=(Text(prompt),)),),
        max_tokens=run.args.max_tokens or DEFAULT_MAX_TOKENS,
        system=JUDGE_SYSTEM,
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


async def _write_ledger(run: _Run, asked: Sequence[_Asked], reservation: Reservation | None) -> None:
    """One row per model asked (and the judge), written once every answer is in; the last settles the
    budget reservation, so the whole amount stays reserved while any call is in flight."""
    if run.store is None:
        return
    rows = [item.row for item in asked if item.row is not None]
    if not rows:
        return
    try:
        for row in rows[:-1]:
            await run.store.record_call(row)
        if reservation is not None:
            await run.store.settle(reservation, rows[-1])
        else:
            await run.store.record_call(rows[-1])
    except StoreError as error:
        _store_failed(run, "the ledger rows", error)


def _store_failed(run: _Run, what: str, error: StoreError) -> None:
    run.warnings.append(f"{what} could not be written to {error.store_name}; see the server log")
    get_logger(__name__).error("store failure", what=what, path=error.path, error=str(error.cause))


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
    )


def _verdict(judge: _Asked, labels: dict[str, str]) -> Verdict:
    outcome = judge.outcome
    if not isinstance(outcome, RouterCallResult):
        assert outcome is not None
        return Verdict(model=outcome.model or judge.name, labels=labels, error=_detail(outcome))
    score, content = agreement(outcome.content)
    return Verdict(model=outcome.model, content=content, agreement=score, cost_usd=outcome.cost_usd, labels=labels)


def _detail(error: ColibriError) -> Failure:
    return Failure.model_validate(error_structured(error)["error"])
