"""The confirmation question (:mod:`colibri_router.confirmation`) as the client's protocol era asks it.

Offered only when the client declared the ``elicitation`` capability. On a 2025 connection the
question is an ``elicitation/create`` request to the client through the session, mid-call; on a
2026-07-28 connection it goes out in an ``InputRequiredResult`` and the call waits for the client's
retry (:mod:`.rounds`). Over Streamable HTTP the server is stateless and reaches no client, so
nothing is offered there and the threshold acts as a cost cap.

The question is a form with no fields: the user's accept or decline is the whole answer.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestFormParams, ElicitResult

from colibri_router.errors import ColibriError
from colibri_router.server.rounds import WaitingCall
from colibri_router.session import Ask
from colibri_router.settings import load_settings

# Nothing to fill in: the client shows the message with its accept and decline buttons.
NO_FIELDS: dict[str, Any] = {"type": "object", "properties": {}}


def declares_elicitation(ctx: Context[Any, Any]) -> bool:
    """Whether the client takes a form question: ``elicitation`` with ``form``, or empty (the form
    mode before modes were named); a client that declared only ``url`` cannot show one."""
    try:
        capabilities = ctx.client_capabilities
    except ValueError:
        return False  # no request: no client to ask
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def confirming() -> bool:
    """Whether calls may ask at all (``COLIBRI_CONFIRM_OVER_USD`` set). A malformed setting says no
    here: the service reads the settings again and fails the call with the setting's error."""
    try:
        return load_settings().confirm_over_usd is not None
    except ColibriError:
        return False


def _accepted(result: ElicitResult) -> bool:
    return result.action == "accept"


def asking_the_session(ctx: Context[Any, Any]) -> Ask:
    """2025: an ``elicitation/create`` request to the client, on the call's own request stream."""
    session = ctx.session
    request_id = ctx.request_context.request_id

    async def ask(question: str) -> bool:
        try:
            result = await session.elicit_form(question, NO_FIELDS, related_request_id=request_id)
        except MCPError:
            return False  # the client refused to ask (an error instead of an answer): not a yes
        return _accepted(result)

    return ask


def asking_in_rounds(call: WaitingCall) -> Ask:
    """2026-07-28: the question in the call's next ``InputRequiredResult``, the answer in the retry."""

    async def ask(question: str) -> bool:
        return _accepted(await call.elicit(ElicitRequestFormParams(message=question, requested_schema=NO_FIELDS)))

    return ask
