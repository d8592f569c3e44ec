"""The default path: a call given no HTTP client uses its event loop's shared client.

Connections are counted at the socket level, by a loopback relay in front of the fake upstream, so
the tests hold whatever httpx does inside its pool.
"""

from __future__ import annotations

import asyncio
import gc
import ssl
import subprocess
import sys
import textwrap
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from fake_upstream import FakeUpstream, kimi_text

from colibri_router.adapters import KimiCompletionOptions, create_kimi_completion
from colibri_router.engine.clients import open_http_client, shared_client, tls_context


class ConnectionCounter:
    """A TCP relay on loopback that forwards to the fake and counts the connections it accepts."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.accepted = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        try:
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            writer.close()
            upstream_writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    if not writer.is_closing():
        writer.write_eof()


@asynccontextmanager
async def counted(base_url: str) -> AsyncIterator[tuple[str, ConnectionCounter]]:
    """``base_url`` rewritten to pass through a counting relay."""
    parts = urlsplit(base_url)
    assert parts.port is not None
    counter = ConnectionCounter(parts.port)
    server = await asyncio.start_server(counter.handle, "127.0.0.1", 0)
    relay_port = server.sockets[0].getsockname()[1]
    try:
        yield urlunsplit(parts._replace(netloc=f"127.0.0.1:{relay_port}")), counter
    finally:
        server.close()


def default_path_options(base_url: str) -> KimiCompletionOptions:
    """The options of a library user who passes no client; the success line is not under test."""
    return KimiCompletionOptions(api_key="sk-test-key", base_url=base_url, logger=lambda _: None)


async def test_two_default_path_calls_in_one_loop_share_one_connection(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("one"), kimi_text("two"))
    async with counted(fake_upstream.kimi_base_url) as (base_url, counter):
        first = await create_kimi_completion("a", default_path_options(base_url))
        second = await create_kimi_completion("b", default_path_options(base_url))
    assert (first.content, second.content) == ("one", "two")
    assert len(fake_upstream.kimi.requests) == 2
    assert counter.accepted == 1


async def test_calls_in_one_loop_get_the_same_client() -> None:
    assert await shared_client() is await shared_client()


def test_each_loop_gets_its_own_client_closed_when_the_loop_ends(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("first loop"), kimi_text("second loop"))

    async def call_and_keep_client() -> tuple[str, httpx.AsyncClient]:
        result = await create_kimi_completion("hi", default_path_options(fake_upstream.kimi_base_url))
        return result.content, await shared_client()

    first_content, first_client = asyncio.run(call_and_keep_client())
    assert first_client.is_closed
    second_content, second_client = asyncio.run(call_and_keep_client())
    assert second_client.is_closed
    assert second_client is not first_client
    assert (first_content, second_content) == ("first loop", "second loop")


def test_a_loop_closed_without_shutting_down_its_generators_is_not_kept_alive() -> None:
    loop = asyncio.new_event_loop()
    loop.run_until_complete(shared_client())
    loop.close()  # skips loop.shutdown_asyncgens(), which would have closed the client
    dead_loop = weakref.ref(loop)
    del loop
    asyncio.run(shared_client())  # a later lookup, from another loop, forgets the closed one
    gc.collect()
    assert dead_loop() is None


def test_one_tls_context_per_process(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    tls_context.cache_clear()  # as in a fresh process
    built = count_calls(monkeypatch, ssl, "create_default_context")
    fake_upstream.kimi.enqueue(kimi_text("a"), kimi_text("b"))

    async def two_calls_and_a_managed_client() -> None:
        for prompt in ("a", "b"):
            await create_kimi_completion(prompt, default_path_options(fake_upstream.kimi_base_url))
        async with open_http_client():
            pass

    asyncio.run(two_calls_and_a_managed_client())
    assert built() == 1


def test_default_path_calls_in_successive_loops_leave_no_resource_warning(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(*(kimi_text(f"answer {n}") for n in range(4)))
    script = textwrap.dedent(
        """
        import asyncio, gc, sys
        from colibri_router.adapters import KimiCompletionOptions, create_kimi_completion

        options = KimiCompletionOptions(api_key="sk-test-key", base_url=sys.argv[1], logger=lambda _: None)

        async def two_calls():
            for prompt in ("a", "b"):
                print((await create_kimi_completion(prompt, options)).content)

        asyncio.run(two_calls())
        asyncio.run(two_calls())
        gc.collect()
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", script, fake_upstream.kimi_base_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == [f"answer {n}" for n in range(4)]
    assert "ResourceWarning" not in done.stderr
    assert "Exception ignored" not in done.stderr


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> Callable[[], int]:
    original = getattr(owner, name)
    calls = 0

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return lambda: calls
