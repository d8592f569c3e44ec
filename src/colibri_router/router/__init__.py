"""The router: one ``router_call`` → which provider and model, the request it gets, the result.

It knows providers only as registry entries (``colibri_router.providers``), and reaches them only
through the runner of their wire (``colibri_router.router.runners``: HTTP through the codec table, a
command-line agent, the host's model). Settings and the registry are loaded here, per call.
Provider-neutral rules live here too: tool-call IDs the host sees, history tools declared when a
call gives none, and progress heartbeats while the upstream streams.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import httpx

from colibri_router.catalog.service import did_you_mean
from colibri_router.conversation import (
    CompletionRequest,
    Message,
    ToolChoice,
    ToolSpec,
    anthropic_blocks,
)
from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.progress import CallProgress, Notify, with_heartbeat
from colibri_router.providers import Choice, Registry, load_registry
from colibri_router.providers.placing import UnknownModelError, refusal
from colibri_router.retry import Deadline
from colibri_router.router.attachments import check_context, files_read, paths_for_agent, with_files
from colibri_router.router.fit import MediaUnreadable, fit_media, has_media
from colibri_router.router.pipeline import DEFAULT_MAX_TOKENS
from colibri_router.router.runners import Ran, Run, runner_for, with_neutral_ids
from colibri_router.schema import AssistantMessage, Attempt, RouterCallInput, RouterCallResult, ToolCallOut
from colibri_router.settings import Settings, load_settings

__all__ = ["Admit", "Plan", "build_request", "plan", "route", "tools_named_in", "with_neutral_ids"]

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
    }
)


@dataclass(frozen=True, slots=True)
class _Call:
    """What every attempt of one router_call shares."""

    args: RouterCallInput
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


async def plan(args: RouterCallInput, choice: Choice, settings: Settings) -> Plan:
    """The request ``args`` becomes for ``choice``: what a service prices before the call, and (handed
    back to :func:`route` as ``planned``) what is then sent. Raises what would refuse it unsent."""
    request, warnings = await _request_for(args, choice, settings)
    return Plan(choice, request, tuple(warnings))


async def _request_for(
    args: RouterCallInput, choice: Choice, settings: Settings, planned: Plan | None = None
) -> tuple[CompletionRequest, list[str]]:
    """The attempt's request: the caller's plan when it is for this model, else one made now."""
    if planned is not None and planned.choice == choice:
        return planned.request, list(planned.warnings)
    provider = choice.provider
    if provider.subscription:
        request, warnings = build_request(args, choice.model, tools_allowed=False)
        if provider.agent is not None:
            request = paths_for_agent(request, args.reading)
        return request, warnings
    request, warnings = build_request(args, choice.model)
    check_context(args, choice, request, settings)
    if has_media(request):
        request, media_warnings = await anyio.to_thread.run_sync(fit_media, request, choice)
        warnings.extend(media_warnings)
    return request, warnings


async def route(
    args: RouterCallInput,
    *,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
    admit: Admit | None = None,
    settings: Settings | None = None,
    planned: Plan | None = None,
) -> RouterCallResult:
    """One router_call: the requested model, then each fallback in turn while failures allow it, all
    within the call's one deadline. Raised errors carry ``attempts`` (one entry per model tried).
    ``files`` not yet read are read here. ``planned``: the :func:`plan` the caller made (and priced)
    for one of the models, sent as it is when that model is tried."""
    settings = settings or load_settings()  # the caller's reading of this call's settings, if it made one
    args = await with_files(args, settings)
    registry = load_registry()
    deadline = Deadline.after(args.timeout_s or settings.timeout_s)
    call = _Call(args, settings, registry, deadline, client, notify, admit, planned)
    fallback = registry.fallback if args.fallback is None else args.fallback  # []: no fallback, not the config's
    candidates = [(args.provider, args.model), *((None, m) for m in fallback)]
    choices = _choose_all(registry, candidates, settings, configured_fallback=args.fallback is None)
    attempts: list[Attempt] = []
    skipped: list[str] = []  # models of the chain that cannot read the call's media
    for position, ((_, model), chosen) in enumerate(zip(candidates, choices, strict=True)):
        started = time.monotonic()
        choice: Choice | None = None
        try:
            if isinstance(chosen, ColibriError):
                raise chosen
            choice = chosen
            result = await _attempt(call, choice)
        except ColibriError as error:
            if choice is not None:
                error.about(choice.provider.name, choice.model)
                if error.kind == "MODEL_NOT_FOUND":
                    error.message += did_you_mean(choice, registry)
            attempts.append(_attempt_entry(choice, model, error.code, error.kind, started, key=error.key_fingerprint))
            last = position == len(candidates) - 1
            if isinstance(error, MediaUnreadable) and not last:
                skipped.append(f"skipped {error.model}: {error.message}")
                continue
            if last or error.kind not in FALLBACK_KINDS or call.deadline.remaining() <= 0:
                error.attempts = tuple(a.model_dump() for a in attempts)
                raise
            continue
        attempts.append(_attempt_entry(choice, model, "ok", None, started, key=result.key))
        return result.model_copy(update={"attempts": attempts, "warnings": [*skipped, *result.warnings]})
    raise AssertionError("unreachable: the loop returns or raises")


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


async def _attempt(call: _Call, choice: Choice) -> RouterCallResult:
    provider, args = choice.provider, call.args
    if args.tools and not provider.tools:
        raise InvalidRequestError(
            f"provider {provider.name!r} runs its own tools; `tools` cannot be passed to it"
            if provider.subscription
            else f"provider {provider.name!r} takes no tools (its config entry says tools = false)"
        )
    answer = await _answer(call, choice)
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
        warnings=[*(args.reading.warnings if args.reading else ()), *answer.warnings, *turn.warnings],
        # A turn without tool calls needs nothing replayed: the host appends its `content` as text.
        message=AssistantMessage(content=anthropic_blocks(turn.parts)) if calls else None,
        attempts=[],
        thread_id=None,
        files_read=files_read(args),
    )
    result.set_repairs(turn.repairs)
    result.set_key(ran.key)
    if not calls and any(getattr(part, "state", None) is not None for part in turn.parts):
        # Opaque state (an agent's session) is kept with a thread, though the host needs no `message`.
        result.set_thread_turn({"role": "assistant", "content": anthropic_blocks(turn.parts)})
    return result


@dataclass(frozen=True, slots=True)
class _Answer:
    request: CompletionRequest
    ran: Ran
    warnings: list[str]


async def _answer(call: _Call, choice: Choice) -> _Answer:
    """One attempt through the runner of the provider's wire: opened (a refusal comes before anything
    is planned or admitted), the request planned and admitted, then run."""
    runner = runner_for(choice.provider)
    connection = runner.open(choice.provider, call.settings)
    request, warnings = await _request_for(call.args, choice, call.settings, call.planned)
    if call.admit is not None:
        warnings.extend(await call.admit(choice, request))
    progress = CallProgress(choice.provider.name, call.notify)
    run = Run(choice, request, connection, call.settings, call.deadline, progress, call.client)
    ran = await (runner.run(run) if call.notify is None else with_heartbeat(progress, lambda: runner.run(run)))
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
    args: RouterCallInput, model: str, *, tools_allowed: bool = True
) -> tuple[CompletionRequest, list[str]]:
    """``tools_allowed`` False: a provider that runs its own tools (the history's are only text to it)."""
    messages = args.conversation()
    tools = args.tool_specs() if tools_allowed else ()
    choice = args.tool_choice_spec() if tools_allowed else None
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
        max_tokens=args.max_tokens or DEFAULT_MAX_TOKENS,
        system=args.system_prompt,
        tools=tools,
        tool_choice=choice,
        temperature=args.temperature,
        reasoning=args.reasoning,
    )
    return request, warnings


def tools_named_in(messages: tuple[Message, ...]) -> tuple[ToolSpec, ...]:
    names = dict.fromkeys(call.name for message in messages for call in message.tool_calls())
    return tuple(ToolSpec(name=name, input_schema=OPEN_SCHEMA) for name in names)
