"""The host's model for the ``host`` provider: ``sampling/createMessage`` to the request's client.

Offered only when the client declared the ``sampling`` capability, and in the form its protocol era
has: on a 2025 connection (the ``initialize`` handshake) the request goes to the client through the
session, mid-call; on a 2026-07-28 connection (``server/discover``, no requests from the server) it
goes out in an ``InputRequiredResult`` and the call waits for the client's retry (:mod:`.rounds`).
Over Streamable HTTP the server is stateless, so neither reaches the client: ``host`` is refused
there (:data:`colibri_router.router.host.NO_SAMPLING_OVER_HTTP`). The router reaches the sampler through
:func:`colibri_router.session.current_session` and never imports mcp. The session also carries the
user's confirmation question (:mod:`.confirm`), which travels the same way in each era.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    CreateMessageRequestParams,
    InputRequiredResult,
    ModelHint,
    ModelPreferences,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import is_version_at_least

from colibri_router.agents.transcript import message_texts
from colibri_router.conversation import CompletionRequest
from colibri_router.errors import InvalidRequestError, error_family
from colibri_router.server import confirm
from colibri_router.server.results import error_result
from colibri_router.server.rounds import HOST_PREFIX, Sampled, WaitingCall, WaitingCalls
from colibri_router.session import McpSession, Sampler
from colibri_router.session import Sampled as HostAnswer

# The first protocol revision whose server asks its client inside a result (InputRequiredResult).
INPUT_REQUIRED_VERSION = "2026-07-28"

Run = Callable[[McpSession], Awaitable[CallToolResult]]
# The waiting call a task runs (set in that task's own context), for its progress notifications.
_ROUND: ContextVar[WaitingCall | None] = ContextVar("colibri_waiting_call", default=None)


async def answer_in_session(
    ctx: Context[Any, Any], *, over_http: bool, run: Run
) -> CallToolResult | InputRequiredResult:
    """``run`` the tool call in the session its transport, protocol era and client capabilities allow."""
    if over_http:
        return await run(McpSession(over_http=True))
    sampling, eliciting = _declares_sampling(ctx), confirm.declares_elicitation(ctx)
    if _input_required_era(ctx):
        # A call runs across rounds only when it may ask: the host's model, or (a threshold set) the user.
        if ctx.request_state is not None or sampling or (eliciting and confirm.confirming()):
            return await _across_rounds(ctx, run, sampling=sampling, eliciting=eliciting)
        return await run(McpSession())
    return await run(
        McpSession(
            sampler=_asking_the_session(ctx) if sampling else None,
            ask=confirm.asking_the_session(ctx) if eliciting else None,
        )
    )


async def _across_rounds(
    ctx: Context[Any, Any], run: Run, *, sampling: bool, eliciting: bool
) -> CallToolResult | InputRequiredResult:
    """A 2026-07-28 call of a client that may be asked: started, or resumed with the client's answers."""
    calls = ctx.request_context.lifespan_context
    assert isinstance(calls, WaitingCalls), "build_server's lifespan holds the waiting calls"
    if ctx.request_state is None:
        call = calls.start(lambda waiting: _in_rounds(waiting, run, sampling=sampling, eliciting=eliciting))
    else:
        try:
            call = calls.resume(ctx.request_state, ctx.input_responses)
        except InvalidRequestError as error:
            return error_result(error)
    call.context = ctx
    return await calls.next_round(call)


async def _in_rounds(call: WaitingCall, run: Run, *, sampling: bool, eliciting: bool) -> CallToolResult:
    _ROUND.set(call)  # this task's context only
    return await run(
        McpSession(
            sampler=_asking_in_rounds(call) if sampling else None,
            ask=confirm.asking_in_rounds(call) if eliciting else None,
        )
    )


def round_context(ctx: Context[Any, Any]) -> Context[Any, Any]:
    """Where a call's progress goes: the request of its current round when it waits across rounds
    (the first round's request has been answered), else its own."""
    call = _ROUND.get()
    return ctx if call is None or call.context is None else call.context


def _input_required_era(ctx: Context[Any, Any]) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, INPUT_REQUIRED_VERSION)


def _declares_sampling(ctx: Context[Any, Any]) -> bool:
    try:
        capabilities = ctx.client_capabilities
    except ValueError:
        return False  # no request: no client to ask
    return capabilities is not None and capabilities.sampling is not None


def _params(request: CompletionRequest, model_hint: str | None) -> CreateMessageRequestParams:
    """The call as the host's model gets it: the messages as text, the system prompt, max_tokens,
    temperature, and the model asked for as a preference hint."""

    texts = message_texts(request.messages)
    return CreateMessageRequestParams(
        messages=[
            SamplingMessage(role=message.role, content=TextContent(type="text", text=text))
            for message, text in zip(request.messages, texts, strict=True)
        ],
        max_tokens=request.max_tokens,
        system_prompt=request.system,
        temperature=request.temperature,
        model_preferences=ModelPreferences(hints=[ModelHint(name=model_hint)]) if model_hint else None,
    )


def _answer(result: Sampled) -> HostAnswer:
    blocks = result.content if isinstance(result.content, list) else [result.content]
    text = "".join(block.text for block in blocks if isinstance(block, TextContent))
    return HostAnswer(text=text, model=result.model or None, stop_reason=result.stop_reason)


def _asking_the_session(ctx: Context[Any, Any]) -> Sampler:
    """2025: a ``sampling/createMessage`` request to the client, on the call's own request stream."""
    session = ctx.session
    request_id = ctx.request_context.request_id

    async def sample(request: CompletionRequest, model_hint: str | None) -> HostAnswer:
        params = _params(request, model_hint)
        try:
            result = await session.create_message(  # the only form a 2025 client understands
                params.messages,
                max_tokens=params.max_tokens,
                system_prompt=params.system_prompt,
                temperature=params.temperature,
                model_preferences=params.model_preferences,
                related_request_id=request_id,
            )
        except MCPError as error:
            raise error_family(HOST_PREFIX).api(
                f"the host declined the sampling request: {error.error.message}"
            ) from error
        return _answer(result)

    return sample


def _asking_in_rounds(call: WaitingCall) -> Sampler:
    """2026-07-28: the request in the call's next ``InputRequiredResult``, the answer in the client's retry."""

    async def sample(request: CompletionRequest, model_hint: str | None) -> HostAnswer:
        return _answer(await call.sample(_params(request, model_hint)))

    return sample
