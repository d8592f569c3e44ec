"""Driving the real ``colibri-router serve --http`` process with the official MCP HTTP client.

Every tool result a session here receives, error or not, is checked against the tool's output schema
from tools/list (tests/result_schemas.py, installed for the whole run by tests/conftest.py)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from harness import SERVER_COMMAND
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from colibri_router.tokens import add_token

# What a Streamable HTTP client sends with every POST (raw requests, outside the official client).
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def tools_call(request_id: int, arguments: dict[str, Any]) -> dict[str, Any]:
    """A raw JSON-RPC ``tools/call`` of router_call."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "router_call", "arguments": arguments},
    }


def cancellation(request_id: int) -> dict[str, Any]:
    """A raw ``notifications/cancelled`` for ``request_id``."""
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server(env: dict[str, str], log: Path, *args: str, port: int | None = None) -> Iterator[str]:
    """A ``serve --http`` process on a free loopback port; yields its MCP URL once /healthz answers.
    Stopped with SIGTERM (uvicorn's graceful shutdown), killed if it lingers."""
    port = port or free_port()
    command = [SERVER_COMMAND, "serve", "--http", "--port", str(port), *args]
    with log.open("a") as stderr:
        process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/healthz", process, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the server never answered {url}:\n{log.read_text()}")


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=60)) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def tokens_for(path: Path, *names: str) -> dict[str, str]:
    """A tokens file with one token per name; returns each name's token."""
    return {name: add_token(path, name) for name in names}
