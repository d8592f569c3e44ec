"""The host's model for the ``host`` provider: ``sampling/createMessage`` through the request's session.

Offered only when the client declared the ``sampling`` capability; the router reaches it through
:func:`colibri_router.session.current_session` and never imports mcp.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import (
    ClientCapabilities,
    ModelHint,
    ModelPreferences,
    SamplingCapability,
    SamplingMessage,
    TextContent,
)

from colibri_router.conversation import CompletionRequest
from colibri_router.errors import error_family
from colibri_router.session import McpSession, Sampled, Sampler

HOST_PREFIX = "HOST"


def session_of(ctx: Context[Any, Any], *, over_http: bool) -> McpSession:
    return McpSession(over_http=over_http, sampler=_sampler(ctx))


def _sampler(ctx: Context[Any, Any]) -> Sampler | None:
    try:
        session = ctx.session
        offered = session.check_client_capability(ClientCapabilities(sampling=SamplingCapability()))
    except (ValueError, AttributeError):
        return None  # no session to ask (outside a request)
    if not offered:
        return None
    request_id = ctx.request_context.request_id

    async def sample(request: CompletionRequest, model_hint: str | None) -> Sampled:
        from colibri_router.agents.transcript import message_texts

        texts = message_texts(request.messages)
        messages = [
            SamplingMessage(role=message.role, content=TextContent(type="text", text=text))
            for message, text in zip(request.messages, texts, strict=True)
        ]
        preferences = ModelPreferences(hints=[ModelHint(name=model_hint)]) if model_hint else None
        try:
            result = await session.create_message(
                messages,
                max_tokens=request.max_tokens,
                system_prompt=request.system,
                temperature=request.temperature,
                model_preferences=preferences,
                related_request_id=request_id,
            )
        except MCPError as error:
            raise error_family(HOST_PREFIX).api(
                f"the host declined the sampling request: {error.error.message}"
            ) from error
        blocks = result.content if isinstance(result.content, list) else [result.content]
        text = "".join(block.text for block in blocks if isinstance(block, TextContent))
        return Sampled(text=text, model=result.model or None, stop_reason=result.stop_reason)

    return sample
