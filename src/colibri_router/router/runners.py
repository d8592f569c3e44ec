"""The runners: how one attempt's request reaches the model, one per kind of wire, all of one shape.

A runner is two steps. ``open`` refuses what must be refused before the request is planned or
admitted (an HTTP provider without its key, a command-line agent over a shared HTTP server) and
returns the HTTP connection, if any; ``run`` sends the request and returns the answer with its
timing and cost. The router picks the runner by the provider's wire record
(:data:`colibri_router.providers.wires.WIRE_RECORDS`), through :data:`RUNNERS`: it never asks which
kind of provider it holds.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

import httpx

from colibri_router.agents import run_agent
from colibri_router.conversation import AssistantTurn, CompletionRequest, Message, ToolCall
from colibri_router.errors import InvalidRequestError
from colibri_router.pricing import TokenCounts, price_call
from colibri_router.progress import CallProgress
from colibri_router.providers import Choice, Connection, ProviderSpec, connect
from colibri_router.providers.wires import RECORDS, RunnerName
from colibri_router.retry import Deadline
from colibri_router.router.host import ask_host
from colibri_router.router.pipeline import run_completion
from colibri_router.session import current_session
from colibri_router.settings import Settings
from colibri_router.toolcalls.arguments import unreadable_calls_warning
from colibri_router.toolcalls.ids import neutral_ids_for_new_calls
from colibri_router.wires import codec_for_call

__all__ = ["RUNNERS", "Ran", "Run", "Runner", "runner_for", "with_neutral_ids"]


@dataclass(frozen=True, slots=True)
class Run:
    """What a runner is handed: the attempt's request, exactly as planned and admitted."""

    choice: Choice
    request: CompletionRequest
    connection: Connection | None  # what ``open`` returned
    settings: Settings
    deadline: Deadline
    progress: CallProgress
    client: httpx.AsyncClient | None


@dataclass(frozen=True, slots=True)
class Ran:
    """What came back: the turn, its timing, its cost (None: unknown) and where that figure is from."""

    turn: AssistantTurn
    latency_ms: int
    ttft_ms: int | None
    cost_usd: float | None
    price_source: str | None
    warnings: tuple[str, ...] = ()
    key: str | None = None  # the fingerprint of the pool key that answered (docs/keys.md)


@dataclass(frozen=True, slots=True)
class Runner:
    open: Callable[[ProviderSpec, Settings], Connection | None]
    run: Callable[[Run], Awaitable[Ran]]


def _open_http(provider: ProviderSpec, settings: Settings) -> Connection:
    return connect(provider)


async def _run_http(run: Run) -> Ran:
    """An HTTP provider: the codec, one transport, the bundled prices."""
    provider, request = run.choice.provider, run.request
    assert run.connection is not None, "an HTTP provider's runner opens a connection"
    codec = codec_for_call(provider, run.choice.model, run.settings)
    completion = await run_completion(
        codec, request, run.connection, deadline=run.deadline, progress=run.progress, client=run.client
    )
    turn = with_neutral_ids(completion.turn, request.messages)
    usage = turn.usage
    price = price_call(
        provider.price_provider,
        turn.model or request.model,
        TokenCounts(
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
        ),
        local=provider.local,
    )
    warnings = tuple(w for w in (unreadable_calls_warning(turn.tool_calls()), price.warning) if w)
    return Ran(turn, completion.latency_ms, completion.ttft_ms, price.cost_usd, price.source, warnings, completion.key)


def _open_agent(provider: ProviderSpec, settings: Settings) -> None:
    if current_session().over_http and not settings.http_agent_cli:
        raise InvalidRequestError(
            f"{provider.name} is refused over HTTP: it would run on the server's own login for every caller "
            "(the server may allow it with COLIBRI_HTTP_AGENT_CLI=1)"
        )


async def _run_agent(run: Run) -> Ran:
    """A command-line agent: no key, no codec; the cost is the agent's own figure (or unknown), never a
    price-list estimate. It reads the call's files itself (the request holds their paths)."""
    answer = await run_agent(
        run.choice.provider, run.request, settings=run.settings, deadline=run.deadline, progress=run.progress
    )
    return Ran(answer.turn, _latency(run.progress), run.progress.ttft_ms, answer.cost_usd, "subscription")


def _open_nothing(provider: ProviderSpec, settings: Settings) -> None:
    return None


async def _run_sampling(run: Run) -> Ran:
    """The host's own model, through MCP sampling: its cost is the host's business."""
    turn = await ask_host(run.choice.provider, run.request, deadline=run.deadline, progress=run.progress)
    return Ran(turn, _latency(run.progress), run.progress.ttft_ms, None, "host")


def _latency(progress: CallProgress) -> int:
    return round((time.monotonic() - progress.started_at) * 1000)


RUNNERS: Mapping[RunnerName, Runner] = MappingProxyType(
    {
        "http": Runner(_open_http, _run_http),
        "agent": Runner(_open_agent, _run_agent),
        "sampling": Runner(_open_nothing, _run_sampling),
    }
)


def runner_for(provider: ProviderSpec) -> Runner:
    """The runner of the provider's wire."""
    return RUNNERS[RECORDS[provider.wire].runner]


def with_neutral_ids(turn: AssistantTurn, history: tuple[Message, ...]) -> AssistantTurn:
    """The turn with its new tool calls under IDs valid for every provider and unused in history."""
    calls = turn.tool_calls()
    if not calls:
        return turn
    renamed = iter(neutral_ids_for_new_calls(calls, history))
    parts = tuple(next(renamed) if isinstance(part, ToolCall) else part for part in turn.parts)
    return replace(turn, parts=parts, repairs=(*turn.repairs, *_call_repairs(calls)))


def _call_repairs(calls: tuple[ToolCall, ...]) -> tuple[str, ...]:
    """Repairs of the model's own calls: IDs it left out or repeated, arguments that were not JSON.
    Renaming valid IDs to neutral ones is routine, not a repair."""
    ids = [call.id for call in calls]
    repairs = []
    if not all(ids) or len(set(ids)) != len(ids):
        repairs.append("ids_repaired")
    if any("_parse_error" in call.arguments for call in calls):
        repairs.append("arguments_unparseable")
    return tuple(repairs)
