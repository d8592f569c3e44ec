"""HTTP clients for upstream calls: how they are configured, and which one a call uses.

A call that is given no client uses :func:`shared_client`, one per running event loop, so library
users calling in a loop keep their connections and never pay for a new client (and its TLS context,
which loads the whole CA bundle) per call. :func:`open_http_client` opens a client whose lifetime
the caller manages. Both share one TLS context per process.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import AsyncIterator

import httpx

# The call's deadline bounds everything; this only stops a connect from hanging on an unreachable host.
HTTP_TIMEOUT = httpx.Timeout(None, connect=10.0)
# Few idle connections are kept: httpcore scans every pooled connection whenever a request starts or
# ends, which made 100 concurrent calls CPU-bound with 64 kept (see benchmarks/).
POOL_LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=16)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every client verifies with, built on first use (httpx's own defaults:
    certifi's CA bundle, or SSL_CERT_FILE / SSL_CERT_DIR when set). httpx would build one per
    client, ~20-50 ms of loading certificates; an SSLContext is safe to share between clients."""
    return httpx.create_ssl_context()


def open_http_client() -> httpx.AsyncClient:
    """A client configured for upstream calls, closed by its opener (``async with``)."""
    return httpx.AsyncClient(timeout=HTTP_TIMEOUT, limits=POOL_LIMITS, verify=tls_context())


class _LoopClient:
    """The shared client of one event loop and the async generator that closes it."""

    __slots__ = ("client", "closer")

    def __init__(self, client: httpx.AsyncClient, closer: AsyncIterator[None]) -> None:
        self.client = client
        self.closer = closer


# A plain dict, not a WeakKeyDictionary: the entry cannot die before its loop anyway, because the
# closer generator holds the loop's finalizer hook (and pooled connections hold the loop). Entries
# leave when the closer runs, or when a lookup finds their loop closed without that shutdown step.
_loop_clients: dict[asyncio.AbstractEventLoop, _LoopClient] = {}


async def shared_client() -> httpx.AsyncClient:
    """The running event loop's client for calls that were given none, opened on first use.

    Its connections are kept across calls in this loop. It is closed, inside the loop, when the loop
    shuts down: a suspended async generator owns it, and every orderly loop end (``asyncio.run``,
    ``asyncio.Runner``, ``anyio.run``, pytest-asyncio) calls ``loop.shutdown_asyncgens()`` while the
    loop still runs, which closes that generator. Neither ``atexit`` (the loop is gone by then, and
    sockets cannot be closed cleanly without it) nor a weak reference to the loop (it dies after
    close) gives that moment. A loop closed without ``shutdown_asyncgens`` (asyncio's documented
    shutdown step skipped) has its entry dropped at the next lookup from any loop.
    """
    loop = asyncio.get_running_loop()
    entry = _loop_clients.get(loop)
    if entry is not None:
        return entry.client
    _forget_closed_loops()
    client = open_http_client()
    closer = _close_with_loop(loop, client)
    _loop_clients[loop] = _LoopClient(client, closer)  # the loop holds the generator only weakly
    # The first step registers the generator with this loop (its asyncgen hooks) and runs it up to
    # its yield, without suspending: no other task can see the entry half made.
    await anext(closer)
    return client


async def _close_with_loop(loop: asyncio.AbstractEventLoop, client: httpx.AsyncClient) -> AsyncIterator[None]:
    try:
        yield
    finally:
        _loop_clients.pop(loop, None)
        await client.aclose()


def _forget_closed_loops() -> None:
    for loop in [loop for loop in _loop_clients if loop.is_closed()]:
        del _loop_clients[loop]
