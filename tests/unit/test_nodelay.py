"""``serve --http``'s connections have Nagle's algorithm off even when accepted from a socket bound the way
uvicorn binds the one its workers share (``proto`` 0, which asyncio does not treat as TCP)."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest
import uvicorn
from uvicorn.server import ServerState

from colibri_router.server.nodelay import NoDelayHTTPProtocol


async def _nodelay_of_accepted(protocol: type[asyncio.Protocol]) -> int:
    """TCP_NODELAY of the server side of one connection accepted through ``protocol``."""
    config = uvicorn.Config(app=lambda scope, receive, send: None, log_config=None)
    config.load()
    state = ServerState()
    listener = socket.socket(family=socket.AF_INET)  # as uvicorn's Config.bind_socket does for --workers
    listener.bind(("127.0.0.1", 0))
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def made() -> asyncio.Protocol:
        made_protocol = protocol(config=config, server_state=state, app_state={})  # type: ignore[call-arg]
        connection_made = made_protocol.connection_made

        def recording(transport: asyncio.BaseTransport) -> None:
            connection_made(transport)
            accepted.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        made_protocol.connection_made = recording  # type: ignore[method-assign]
        return made_protocol

    server = await asyncio.get_running_loop().create_server(made, sock=listener)
    try:
        _, writer = await asyncio.open_connection(*listener.getsockname())
        try:
            return await asyncio.wait_for(accepted, 5)
        finally:
            writer.close()
    finally:
        server.close()


async def test_a_connection_from_a_workers_socket_gets_nodelay() -> None:
    assert socket.socket(family=socket.AF_INET).proto == 0  # the case asyncio skips
    assert await _nodelay_of_accepted(NoDelayHTTPProtocol) != 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="what asyncio does on Linux, where it was seen")
async def test_without_it_asyncio_leaves_such_a_connection_with_nagle_on() -> None:
    assert await _nodelay_of_accepted(NoDelayHTTPProtocol.__mro__[1]) == 0
