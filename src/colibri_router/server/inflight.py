"""Calls in flight in this process, by caller and JSON-RPC request id.

Over stdio the MCP session itself cancels a request when the host sends ``notifications/cancelled``.
Over stateless Streamable HTTP the notification arrives on a POST of its own, with no session to
find the request in, possibly at another replica: the HTTP shell looks the call up here by
(caller, request id), and when it is not in this process, publishes the key to the other replicas
(through the store, when the store can broadcast), whose listeners look it up here in turn.

The key includes the caller because request ids are chosen by each client (every client starts at
0 or 1): one caller can only ever cancel their own calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import anyio


def call_key(principal: str, request_id: int | str | None) -> str:
    """One string per (caller, request id); ``1`` and ``"1"`` are different JSON-RPC ids."""
    return json.dumps([principal, request_id], separators=(",", ":"))


class InFlight:
    """The cancel scopes of running calls. Used from one event loop (a server process's)."""

    def __init__(self) -> None:
        self._scopes: dict[str, list[anyio.CancelScope]] = {}

    @contextmanager
    def track(self, key: str) -> Iterator[anyio.CancelScope]:
        """Run the body as a call that :meth:`cancel` can stop; ``scope.cancelled_caught`` tells
        afterwards whether it was."""
        with anyio.CancelScope() as scope:
            scopes = self._scopes.setdefault(key, [])
            scopes.append(scope)
            try:
                yield scope
            finally:
                scopes.remove(scope)
                if not scopes:
                    del self._scopes[key]

    def cancel(self, key: str) -> bool:
        """Cancel every call running under ``key``; False when none runs in this process."""
        scopes = self._scopes.get(key, [])
        for scope in scopes:
            scope.cancel()
        return bool(scopes)

    def __len__(self) -> int:
        return sum(len(scopes) for scopes in self._scopes.values())


# This process's running tool calls, for cancellations that arrive over stateless HTTP.
IN_FLIGHT = InFlight()
