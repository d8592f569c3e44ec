"""The lean upstream process, the HTTP client the in-process arms share, and spawning MCP servers.

Everything a benchmark talks to is on 127.0.0.1: ``lean_upstream.py`` answers for Kimi in a process
of its own, and every server process gets base URLs pointing at it (and dummy keys), so no benchmark
can reach a real API.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import anyio
import httpx
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from colibri_router.adapters import KimiCompletionOptions
from colibri_router.engine.clients import HTTP_TIMEOUT, POOL_LIMITS
from colibri_router.logs import get_logger

__all__ = [
    "ANSWER",
    "KIMI_KEY",
    "MINIMAL_SERVER",
    "NO_UPSTREAM",
    "PROMPT",
    "ROOT",
    "SERVER_COMMAND",
    "LeanUpstream",
    "benchmark_client",
    "default_logger_to_devnull",
    "environment",
    "free_port",
    "kimi_options",
    "lean_upstream",
    "mcp_session",
    "router_parameters",
    "server_pool_limits",
    "spawned_http",
]

ROOT = Path(__file__).resolve().parent.parent
# The console script installed next to the interpreter running the benchmarks (uv's .venv/bin).
SERVER_COMMAND = str(Path(sys.executable).with_name("colibri-router"))
MINIMAL_SERVER = Path(__file__).with_name("minimal_server.py")
LEAN_UPSTREAM = Path(__file__).with_name("lean_upstream.py")
KIMI_KEY = "sk-kimi-bench-0123456789"
ANTHROPIC_KEY = "sk-ant-bench-9876543210"
PROMPT = "say hi"
ANSWER = f"echo: {PROMPT}"  # what the lean upstream is told to answer
NO_UPSTREAM = "http://127.0.0.1:9"  # the discard port: for a server that makes no call (start-up)


@dataclass(frozen=True, slots=True)
class LeanUpstream:
    """A running ``lean_upstream.py``: its root URL and the Kimi base URLs it answers on."""

    url: str

    @property
    def kimi_base_url(self) -> str:
        """SSE when the request asks ``"stream": true`` (the adapters always do)."""
        return f"{self.url}/kimi/v1"

    @property
    def kimi_json_base_url(self) -> str:
        """A JSON answer whatever the request asks."""
        return f"{self.url}/kimi/v1/json"


@asynccontextmanager
async def lean_upstream(latency_s: float = 0.0) -> AsyncIterator[LeanUpstream]:
    """Spawn the lean upstream on this interpreter; stop it (and wait for it) on the way out."""
    command = [sys.executable, str(LEAN_UPSTREAM), "--latency-s", str(latency_s), "--answer", ANSWER]
    process = await anyio.open_process(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None)
    try:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive()  # EndOfStream if it died: its traceback is on stderr
        yield LeanUpstream(f"http://127.0.0.1:{int(line)}")
    finally:
        with anyio.CancelScope(shield=True):
            if process.stdin is not None:
                await process.stdin.aclose()  # it exits at the end of its stdin
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
            await process.aclose()


def server_pool_limits() -> httpx.Limits:
    """The pool limits of every colibri-router client (``colibri_router.engine.clients.POOL_LIMITS``)."""
    return POOL_LIMITS


def benchmark_client() -> httpx.AsyncClient:
    """A client shaped like the server's: its timeout and pool limits.

    ``trust_env=False``: a developer's HTTP_PROXY must not route the in-process arms through a proxy
    while the spawned server (whose environment the MCP client strips) goes direct.
    """
    return httpx.AsyncClient(timeout=HTTP_TIMEOUT, limits=server_pool_limits(), trust_env=False)


def kimi_options(base_url: str, client: httpx.AsyncClient) -> KimiCompletionOptions:
    """Adapter options: key and URL passed explicitly, the shared client, default logger."""
    return KimiCompletionOptions(api_key=KIMI_KEY, base_url=base_url, http_client=client)


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` for the block (colibri-router reads its settings per call), and
    what was there before restored after."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@functools.cache
def default_logger_to_devnull() -> None:
    """Let colibri_router configure its default structlog logger while stderr is /dev/null.

    ``get_logger`` binds the stream it finds at first use, so the adapter's own default (JSON lines,
    secret redaction, timestamps: the real per-call cost) writes to /dev/null for the rest of the run,
    and the benchmark's own stderr stays usable. The file stays open for the life of the process.
    """
    devnull = open(os.devnull, "w")  # noqa: SIM115 - structlog keeps writing to it until exit
    real_stderr, sys.stderr = sys.stderr, devnull
    try:
        get_logger()
    finally:
        sys.stderr = real_stderr


def router_parameters(kimi_base_url: str, anthropic_base_url: str) -> StdioServerParameters:
    """How an MCP host would start colibri-router against loopback URLs (the MCP client adds PATH, HOME…)."""
    env = {
        "COLIBRI_KIMI_API_KEY": KIMI_KEY,
        "COLIBRI_KIMI_BASE_URL": kimi_base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": anthropic_base_url,
        "COLIBRI_LOG_LEVEL": "info",  # the production default: one log line per call, to stderr
    }
    return StdioServerParameters(command=SERVER_COMMAND, args=[], env=env)


@asynccontextmanager
async def mcp_session(params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[ClientSession]:
    """An initialized session with a freshly spawned server; the SDK stops the process on exit."""
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def spawned_http(
    command: list[str], env: dict[str, str], log: Path, port: int, *, health: str = "/healthz", path: str = "/mcp"
) -> Iterator[tuple[str, int]]:
    """An HTTP server's process on ``port``: the URL of ``path`` (an MCP server's endpoint) and its pid once
    ``health`` answers 200; stopped (terminated, then killed) on exit."""
    with log.open("a") as stderr:
        process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[:3]} did not start:\n{log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}{health}", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.05)  # not listening yet, or not ready (503 from a readiness route)
        yield f"http://127.0.0.1:{port}{path}", process.pid
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
