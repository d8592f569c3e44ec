"""The ``host`` provider: the connected host's own model, through MCP sampling.

The request goes to the client the call came from, as ``sampling/createMessage`` (messages as text,
the system prompt, ``max_tokens``, ``temperature``, and the model asked for as a preference hint),
when the client declared the ``sampling`` capability: on either protocol era, over stdio (the MCP shell
sends it as the era requires, :mod:`colibri_router.server.sampling`); never over stateless HTTP. The
answer becomes an :class:`AssistantTurn` like any codec's. Nothing is priced: the host pays for its
own model.
"""

from __future__ import annotations

from colibri_router.conversation import AssistantTurn, CompletionRequest, Text, Usage
from colibri_router.deadlines import within
from colibri_router.errors import InvalidRequestError, error_family
from colibri_router.progress import CallProgress
from colibri_router.providers.builtin import HOST_MODEL
from colibri_router.providers.spec import ProviderSpec
from colibri_router.retry import Deadline
from colibri_router.session import current_session

NO_SAMPLING = (
    "the MCP host does not offer its own model: its client declared no `sampling` capability. "
    "Use a command-line agent on the user's own login instead: provider claude-code, codex or gemini-cli"
)
NO_SAMPLING_OVER_HTTP = (
    "the host's model cannot be asked over HTTP: the server is stateless there, so no sampling request "
    "reaches the client. Attach colibri-router over stdio to use provider host"
)


async def ask_host(
    spec: ProviderSpec, request: CompletionRequest, *, deadline: Deadline, progress: CallProgress
) -> AssistantTurn:
    session = current_session()
    sampler = session.sampler
    if sampler is None:
        raise InvalidRequestError(NO_SAMPLING_OVER_HTTP if session.over_http else NO_SAMPLING)
    hint = None if request.model == HOST_MODEL else request.model
    await progress.step("waiting for the host's model")
    with within(deadline.remaining()) as scope:
        sampled = await sampler(request, hint)
    if scope.cancelled_caught:
        raise error_family(spec.error_prefix).timeout("the host's model gave no answer within the call's deadline")
    return AssistantTurn(
        parts=(Text(sampled.text),),
        stop_reason=sampled.stop_reason,
        model=sampled.model or HOST_MODEL,
        usage=Usage(),
        warnings=("the host reported no token counts: they are 0",),
    )
