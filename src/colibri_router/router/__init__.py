"""The router: one ``router_call`` → which provider and model, the request it gets, the result.

It takes the internal call object a service made where the call entered
(:class:`~colibri_router.router.call.Call`: the conversation as parts, the files read, the options),
never the tool's pydantic input, and answers with an :class:`~colibri_router.router.call.Outcome`.

It knows providers only as registry entries (``colibri_router.providers``), and reaches them only
through the runner of their wire (``colibri_router.router.runners``: HTTP through the codec table, a
command-line agent, the host's model). Settings and the registry are loaded here, per call.
Provider-neutral rules live here too: tool-call IDs the host sees, history tools declared when a
call gives none, and progress heartbeats while the upstream streams.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import anyio
import httpx

from colibri_router.conversation import (
    CompletionRequest,
    Message,
    ToolChoice,
    ToolSpec,
    anthropic_blocks,
)
from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.gateway.enforce import check_chain, gate
from colibri_router.progress import CallProgress, Notify, with_heartbeat
from colibri_router.providers import Choice, Registry, load_registry
from colibri_router.providers.known import did_you_mean
from colibri_router.providers.placing import UnknownModelError, refusal
from colibri_router.retry import Deadline
from colibri_router.router.attachments import check_context, files_read_of
from colibri_router.router.call import Call, Outcome
from colibri_router.router.fit import MediaUnreadable, fit_media, has_media
from colibri_router.router.pipeline import DEFAULT_MAX_TOKENS
from colibri_router.router.reroute import reroute as _reroute
from colibri_router.router.runners import Ran, Run, runner_for, with_neutral_ids
from colibri_router.schema import AssistantMessage, Attempt, RouterCallResult, ToolCallOut
from colibri_router.settings import Settings, load_settings
from colibri_router.structured import with_output
from colibri_router.structured.repair import rerun_on, settle

__all__ = ["Admit", "Call", "Outcome", "Plan", "build_request", "plan", "route", "tools_named_in", "with_neutral_ids"]

OPEN_SCHEMA = {"type": "object"}
# Called with each attempt's provider choice and request just before it is sent: may refuse it (by
# raising) and returns warnings for the result. The service uses it for cost caps and budgets.
Admit = Callable[[Choice, CompletionRequest], Awaitable[list[str]]]
# Failures another model may not have. Never after INVALID_REQUEST, AUTH_FAILED, CONFIG_ERROR or
# CONTENT_FILTERED: the next model would refuse the same request, or the user must act.
FALLBACK_KINDS = frozenset(
    {
        "RATE_LIMITED",
        "QUOTA_EXCEEDED",
        "PROVIDER_ERROR",
        "NETWORK_ERROR",
        "TIMEOUT",
        "MODEL_NOT_FOUND",
        "CONTEXT_LENGTH",
        "INVALID_OUTPUT",  # after its repair turn: another model may answer in the shape
    }
)


@dataclass(frozen=True, slots=True)
class _Routing:
    """What every attempt of one router_call shares."""

    call: Call
    settings: Settings
    registry: Registry
    deadline: Deadline
    client: httpx.AsyncClient | None
    notify: Notify | None
    admit: Admit | None
    planned: Plan | None


@dataclass(frozen=True, slots=True)
class Plan:
    """The request one attempt sends to ``choice``, exactly as it goes out (files checked against the
    model's context, media fitted to it, an agent's files as paths), and what building it warned of."""

    choice: Choice
    request: CompletionRequest
    warnings: tuple[str, ...]


async def plan(call: Call, choice: Choice, settings: Settings, *, reroute: bool | None = None) -> Plan:
    """The request ``call`` becomes for ``choice``: what a service prices before the call, and (handed
    back to :func:`route` as ``planned``) what is then sent. Raises what would refuse it unsent.
    ``reroute`` as for :func:`route`: the plan is then for the model the call goes to instead."""
    if _reroutes(call, reroute):
        choice, _ = _rerouted(call, choice, load_registry(), settings)  # route says why, once
    request, warnings = await _request_for(call, choice, settings)
    return Plan(choice, request, tuple(warnings))


async def _request_for(
    call: Call, choice: Choice, settings: Settings, planned: Plan | None = None
) -> tuple[CompletionRequest, list[str]]:
    """The attempt's request: the caller's plan when it is for this model, else one made now. A
    command-line agent gets the files' paths (issue 25: it reads them itself, never inlined)."""
    if planned is not None and planned.choice == choice:
        return planned.request, list(planned.warnings)
    request, warnings = await _built(call, choice, settings)
    options = call.options
    if options.response_schema is not None:  # the answer's shape, in the form this model supports
        request, output_warnings = with_output(
            request, options.response_schema, options.response_schema_name, choice.provider
        )
        warnings.extend(output_warnings)
    return request, warnings


async def _built(call: Call, choice: Choice, settings: Settings) -> tuple[CompletionRequest, list[str]]:
    provider = choice.provider
    if provider.subscription:
        return build_request(call, choice.model, tools_allowed=False, files_as_paths=provider.agent is not None)
    request, warnings = build_request(call, choice.model)
    check_context(call.reading, choice, request, settings)
    if has_media(request):
        request, media_warnings = await anyio.to_thread.run_sync(fit_media, request, choice)
        warnings.extend(media_warnings)
    return request, warnings


async def route(
    call: Call,
    *,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
    admit: Admit | None = None,
    settings: Settings | None = None,
    planned: Plan | None = None,
    reroute: bool | None = None,
) -> Outcome:
    """One router_call: the requested model, then each fallback in turn while failures allow it, all
    within the call's one deadline. Raised errors carry ``attempts`` (one entry per model tried).
    ``planned``: the :func:`plan` the caller made (and priced) for one of the models, sent as it is
    when that model is tried. ``reroute``: whether the model asked for goes to a configured one when it
    cannot read the turn (:mod:`colibri_router.router.reroute`); None: when the call names no
    ``fallback``."""
    settings = settings or load_settings()  # the caller's reading of this call's settings, if it made one
    options = call.options
    registry = load_registry()
    deadline = Deadline.after(options.timeout_s or settings.timeout_s)
    routing = _Routing(call, settings, registry, deadline, client, notify, admit, planned)
    # (): no fallback, not the config's
    fallback = registry.fallback if options.fallback is None else options.fallback
    candidates = [(options.provider, options.model), *((None, m) for m in fallback)]
    choices = _choose_all(registry, candidates, settings, configured_fallback=options.fallback is None)
    check_chain(choices)  # a team member's policy: every model of the chain, before anything is sent
    attempts: list[Attempt] = []
    skipped: list[str] = []  # models of the chain that cannot read the call's media
    rerouted: list[str] = []  # the model asked for, swapped for one that can read the turn
    for position, ((_, model), chosen) in enumerate(zip(candidates, choices, strict=True)):
        started = time.monotonic()
        choice: Choice | None = None
        try:
            if isinstance(chosen, ColibriError):
                raise chosen
            choice = chosen
            if position == 0 and _reroutes(call, reroute):
                choice, rerouted = _rerouted(call, choice, registry, settings)
            outcome = await _attempt(routing, choice)
        except ColibriError as error:
            if rerouted and position == 0:
                error.message += f" ({'; '.join(rerouted)})"  # why a model the caller did not name failed
            if choice is not None:
                error.about(choice.provider.name, choice.model)
                if error.kind == "MODEL_NOT_FOUND":
                    error.message += did_you_mean(choice, registry)
            attempts.append(_attempt_entry(choice, model, error.code, error.kind, started, key=error.key_fingerprint))
            last = position == len(candidates) - 1
            if isinstance(error, MediaUnreadable) and not last:
                skipped.append(f"skipped {error.model}: {error.message}")
                continue
            if last or error.kind not in FALLBACK_KINDS or routing.deadline.remaining() <= 0:
                error.attempts = tuple(a.model_dump() for a in attempts)
                raise
            continue
        attempts.append(_attempt_entry(choice, model, "ok", None, started, key=outcome.key))
        result = outcome.result
        warnings = [*rerouted, *skipped, *result.warnings]
        return replace(outcome, result=result.model_copy(update={"attempts": attempts, "warnings": warnings}))
    raise AssertionError("unreachable: the loop returns or raises")


def _reroutes(call: Call, reroute: bool | None) -> bool:
    return call.options.fallback is None if reroute is None else reroute


def _rerouted(call: Call, choice: Choice, registry: Registry, settings: Settings) -> tuple[Choice, list[str]]:
    """The model the call goes to instead of ``choice`` when ``choice`` cannot read it, and why."""
    return _reroute(call.messages(), choice, registry, settings, lambda: build_request(call, choice.model)[0])


def _choose_all(
    registry: Registry,
    candidates: list[tuple[str | None, str | None]],
    settings: Settings,
    *,
    configured_fallback: bool,
) -> list[Choice | ColibriError]:
    """Every model of the chain placed before anything is sent: a name no rule places, the call's or a
    fallback's, refuses the call now (all such names in one error), not after the models before it
    were asked and paid for. Any other error stays the attempt's, reported when the chain reaches it.
    The config file's ``[fallback]`` is the user's configuration: its names are trusted."""
    choices: list[Choice | ColibriError] = []
    unknown: list[UnknownModelError] = []
    for position, (provider, model) in enumerate(candidates):
        try:
            choices.append(registry.choose(provider, model, settings, configured=position > 0 and configured_fallback))
        except UnknownModelError as error:
            unknown.append(error)
        except ColibriError as error:
            choices.append(error)
    if unknown:
        raise refusal(unknown)
    return choices


async def _attempt(routing: _Routing, choice: Choice) -> Outcome:
    provider, call = choice.provider, routing.call
    if call.options.tools and not provider.tools:
        raise InvalidRequestError(
            f"provider {provider.name!r} runs its own tools; `tools` cannot be passed to it"
            if provider.subscription
            else f"provider {provider.name!r} takes no tools (its config entry says tools = false)"
        )
    answer = await _answer(routing, choice)
    settled = None
    schema = call.options.response_schema
    if schema is not None and answer.request.output is not None:
        rerun = rerun_on(choice, routing.settings, routing.deadline, routing.notify, routing.client)
        settled = await settle(answer.request, answer.ran, schema, choice, rerun)
        answer = _Answer(answer.request, settled.ran, answer.warnings)
    turn, request, ran = answer.ran.turn, answer.request, answer.ran
    calls = turn.tool_calls()
    usage = turn.usage
    result = RouterCallResult(
        provider=provider.name,
        content=turn.text(),
        model=turn.model or request.model,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        cost_usd=ran.cost_usd,
        price_source=ran.price_source,
        latency_ms=ran.latency_ms,
        ttft_ms=ran.ttft_ms,
        stop_reason=turn.stop_reason,
        tool_calls=[ToolCallOut(id=c.id, name=c.name, input=dict(c.arguments)) for c in calls],
        thinking=turn.thinking(),
        warnings=[*(call.reading.warnings if call.reading else ()), *answer.warnings, *turn.warnings],
        # A turn without tool calls needs nothing replayed: the host appends its `content` as text.
        message=AssistantMessage(content=anthropic_blocks(turn.parts)) if calls else None,
        attempts=[],
        thread_id=None,
        files_read=files_read_of(call.reading),
        parsed=settled.parsed if settled is not None else None,
    )
    return Outcome(result, tuple(dict.fromkeys(turn.repairs)), turn.parts, ran.key)


@dataclass(frozen=True, slots=True)
class _Answer:
    request: CompletionRequest
    ran: Ran
    warnings: list[str]


async def _answer(routing: _Routing, choice: Choice) -> _Answer:
    """One attempt through the runner of the provider's wire: opened (a refusal comes before anything
    is planned or admitted), the request planned and admitted, then run."""
    runner = runner_for(choice.provider)
    connection = runner.open(choice.provider, routing.settings)
    request, warnings = await _request_for(routing.call, choice, routing.settings, routing.planned)
    if routing.admit is not None:
        warnings.extend(await routing.admit(choice, request))
    passed = await gate(choice, request)  # a team member's policy: cost per call, tokens per minute
    warnings.extend(passed.warnings)
    progress = CallProgress(choice.provider.name, routing.notify)
    run = Run(choice, request, connection, routing.settings, routing.deadline, progress, routing.client)
    notify = routing.notify
    ran = await (runner.run(run) if notify is None else with_heartbeat(progress, lambda: runner.run(run)))
    await passed.settle(ran.turn.usage)
    warnings.extend(ran.warnings)
    return _Answer(request, ran, warnings)


def _attempt_entry(
    choice: Choice | None, asked: str | None, outcome: str, kind: str | None, started: float, *, key: str | None = None
) -> Attempt:
    return Attempt(
        provider=choice.provider.name if choice else "",
        model=choice.model if choice else asked or "",
        outcome=outcome,
        kind=kind,
        latency_ms=round((time.monotonic() - started) * 1000),
        key=key,
    )


def build_request(
    call: Call, model: str, *, tools_allowed: bool = True, files_as_paths: bool = False
) -> tuple[CompletionRequest, list[str]]:
    """``tools_allowed`` False: a provider that runs its own tools (the history's are only text to it).
    ``files_as_paths``: a command-line agent, which reads the files itself."""
    options = call.options
    messages = call.messages(files_as_paths=files_as_paths)
    tools = options.tools if tools_allowed else ()
    choice = options.tool_choice if tools_allowed else None
    warnings: list[str] = []
    if not tools and tools_allowed:
        history_tools = tools_named_in(messages)
        if history_tools:
            # Claude refuses tool blocks without tool definitions; declaring the history's tools with
            # an open schema and tool_choice none keeps the history readable and calls off.
            tools, choice = history_tools, ToolChoice(mode="none")
            warnings.append(
                "the conversation holds tool calls but the call gave no tools: declared "
                f"{', '.join(t.name for t in tools)} with an open schema and disabled further tool calls"
            )
        elif choice is not None:
            warnings.append("tool_choice ignored: the call gave no tools")
            choice = None
    elif choice is not None and choice.mode == "tool" and choice.name not in {t.name for t in tools}:
        raise InvalidRequestError(f"tool_choice names tool {choice.name!r}, which is not among `tools`")
    request = CompletionRequest(
        model=model,
        messages=messages,
        max_tokens=options.max_tokens or DEFAULT_MAX_TOKENS,
        system=options.system_prompt,
        tools=tools,
        tool_choice=choice,
        temperature=options.temperature,
        reasoning=options.reasoning,
    )
    return request, warnings


def tools_named_in(messages: tuple[Message, ...]) -> tuple[ToolSpec, ...]:
    names = dict.fromkeys(call.name for message in messages for call in message.tool_calls())
    return tuple(ToolSpec(name=name, input_schema=OPEN_SCHEMA) for name in names)
