"""What the router may know of the MCP session a call came in on, without importing mcp.

The shell sets it for each request: whether the call arrived over Streamable HTTP (command-line
agents would then run on the server's login for every caller), and, when the client declared the
``sampling`` capability, a :class:`Sampler` that sends ``sampling/createMessage`` back through that
session (the ``host`` provider), and, when it declared ``elicitation``, an :data:`Ask` that puts a
yes/no question to its user (:mod:`colibri_router.confirmation`). A context variable carries it, so
every router call made while serving the request (fallbacks, many models, agent-testing runs) sees
the same session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from colibri_router.conversation import CompletionRequest


@dataclass(frozen=True, slots=True)
class Sampled:
    """The host's answer to ``sampling/createMessage``."""

    text: str
    model: str | None
    stop_reason: str | None


class Sampler(Protocol):
    async def __call__(self, request: CompletionRequest, model_hint: str | None) -> Sampled: ...


# The question (one line) → whether the user accepted it; False for a refusal or a dismissal.
Ask = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class McpSession:
    over_http: bool = False
    sampler: Sampler | None = None
    ask: Ask | None = None


_PLAIN = McpSession()
_CURRENT: ContextVar[McpSession | None] = ContextVar("colibri_mcp_session", default=None)


def current_session() -> McpSession:
    """The session of the request being served (a plain one outside the MCP server)."""
    return _CURRENT.get() or _PLAIN


@contextmanager
def in_session(session: McpSession) -> Iterator[None]:
    token = _CURRENT.set(session)
    try:
        yield
    finally:
        _CURRENT.reset(token)
