"""uvicorn's HTTP protocol (the one its ``auto`` setting picks) with ``TCP_NODELAY`` on every connection.

asyncio turns Nagle's algorithm off by itself, but only on sockets whose ``proto`` is TCP. With
``--workers``, uvicorn binds the socket its workers share as ``socket.socket(family)``, whose ``proto``
is 0, and so are the connections accepted from it: asyncio leaves them alone. A one-body answer (its
headers and its body are two writes) then waits for the client's delayed acknowledgement of the
headers before the body leaves, about 40 ms a call on Linux.
"""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.auto import AutoHTTPProtocol


class NoDelayHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]  # a class chosen at import
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        connection = transport.get_extra_info("socket")
        if connection is not None and connection.family in (socket.AF_INET, socket.AF_INET6):
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
