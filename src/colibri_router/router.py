"""The router: one ``router_call`` → which provider and model, the request it gets, the result.

It knows providers only as registry entries (``colibri_router.providers``) and codecs only through
the wire table (``colibri_router.wires``). Settings and the registry are loaded here, per call.
Provider-neutral rules live here too: tool-call IDs the host sees, history tools declared when a
call gives none, and progress heartbeats while the upstream streams.
"""

from __future__ import annotations

from dataclasses import replace

import httpx

from colibri_router.adapters import DEFAULT_MAX_TOKENS, Completion, run_completion
from colibri_router.clients import open_http_client
from colibri_router.conversation import (
    AssistantTurn,
    CompletionRequest,
    Message,
    ToolCall,
    ToolChoice,
    ToolSpec,
    anthropic_blocks,
)
from colibri_router.errors import InvalidRequestError
from colibri_router.progress import CallProgress, Notify, with_heartbeat
from colibri_router.providers import connect, load_registry
from colibri_router.retry import Deadline
from colibri_router.schema import AssistantMessage, RouterCallInput, RouterCallResult, ToolCallOut
from colibri_router.settings import load_settings
from colibri_router.toolcalls.ids import neutral_ids_for_new_calls
from colibri_router.wires import codec_for

# open_http_client is the clients module's: the shell opens its one client through the router.
__all__ = ["build_request", "open_http_client", "route", "tools_named_in", "with_neutral_ids"]

OPEN_SCHEMA = {"type": "object"}


async def route(
    args: RouterCallInput,
    *,
    client: httpx.AsyncClient | None = None,
    notify: Notify | None = None,
) -> RouterCallResult:
    settings = load_settings()
    choice = load_registry().choose(args.provider, args.model, settings)
    provider, model = choice.provider, choice.model
    if args.tools and not provider.tools:
        raise InvalidRequestError(f"provider {provider.name!r} takes no tools (its config entry says tools = false)")
    connection = connect(provider)
    request, warnings = build_request(args, model)
    codec = codec_for(provider, model, settings.kimi_tool_ids)
    progress = CallProgress(provider.name, notify)

    async def complete() -> Completion:
        return await run_completion(
            codec,
            request,
            connection,
            deadline=Deadline.after(args.timeout_s or settings.timeout_s),
            progress=progress,
            client=client,
        )

    completion = await (complete() if notify is None else with_heartbeat(progress, complete))
    turn = with_neutral_ids(completion.turn, request.messages)
    calls = turn.tool_calls()
    return RouterCallResult(
        provider=provider.name,
        content=turn.text(),
        model=turn.model or request.model,
        prompt_tokens=turn.usage.prompt_tokens,
        completion_tokens=turn.usage.completion_tokens,
        latency_ms=completion.latency_ms,
        ttft_ms=completion.ttft_ms,
        stop_reason=turn.stop_reason,
        tool_calls=[ToolCallOut(id=c.id, name=c.name, input=dict(c.arguments)) for c in calls],
        thinking=turn.thinking(),
        warnings=[*warnings, *turn.warnings],
        # A turn without tool calls needs nothing replayed: the host appends its `content` as text.
        message=AssistantMessage(content=anthropic_blocks(turn.parts)) if calls else None,
    )


def build_request(args: RouterCallInput, model: str) -> tuple[CompletionRequest, list[str]]:
    messages = args.conversation()
    tools = args.tool_specs()
    choice = args.tool_choice_spec()
    warnings: list[str] = []
    if not tools:
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


def with_neutral_ids(turn: AssistantTurn, history: tuple[Message, ...]) -> AssistantTurn:
    """The turn with its new tool calls under IDs valid for every provider and unused in history."""
    calls = turn.tool_calls()
    if not calls:
        return turn
    renamed = iter(neutral_ids_for_new_calls(calls, history))
    parts = tuple(next(renamed) if isinstance(part, ToolCall) else part for part in turn.parts)
    return replace(turn, parts=parts)
