"""The loopback fake upstream, the HTTP client the in-process arms share, and spawning MCP servers.

Everything a benchmark talks to is on 127.0.0.1: the fake answers for Kimi and Anthropic, and every
server process gets base URLs pointing at it (and dummy keys), so no benchmark can reach a real API.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import httpx
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from colibri_router.adapters import HTTP_TIMEOUT, KimiCompletionOptions
from colibri_router.logs import get_logger

ROOT = Path(__file__).resolve().parent.parent
# The fake upstream is test code (tests/fake_upstream.py), not part of the installed package. pytest finds
# it through pyproject's `pythonpath = ["tests"]`; the benchmarks put the same folder on sys.path.
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from fake_upstream import FakeUpstream, kimi_text, raw_body  # noqa: E402

__all__ = [
    "ANSWER",
    "KIMI_KEY",
    "MINIMAL_SERVER",
    "PROMPT",
    "SERVER_COMMAND",
    "SERVER_KEEPALIVE",
    "SMALL_KEEPALIVE",
    "FakeUpstream",
    "benchmark_client",
    "default_logger_to_devnull",
    "kimi_options",
    "kimi_text",
    "mcp_session",
    "raw_body",
    "router_parameters",
    "small_pool_client",
]

# The console script installed next to the interpreter running the benchmarks (uv's .venv/bin).
SERVER_COMMAND = str(Path(sys.executable).with_name("colibri-router"))
MINIMAL_SERVER = Path(__file__).with_name("minimal_server.py")
KIMI_KEY = "sk-kimi-bench-0123456789"
ANTHROPIC_KEY = "sk-ant-bench-9876543210"
PROMPT = "say hi"
ANSWER = f"echo: {PROMPT}"  # the fake's default reply to PROMPT
SERVER_KEEPALIVE = 64  # colibri_router.router.open_http_client: max_keepalive_connections
SMALL_KEEPALIVE = 16


def benchmark_client(keepalive: int = SERVER_KEEPALIVE) -> httpx.AsyncClient:
    """A client shaped like the server's (``colibri_router.router.open_http_client``).

    ``trust_env=False``: a developer's HTTP_PROXY must not route the in-process arms through a proxy
    while the spawned server (whose environment the MCP client strips) goes direct.
    """
    return httpx.AsyncClient(
        timeout=HTTP_TIMEOUT,
        limits=httpx.Limits(max_connections=256, max_keepalive_connections=keepalive),
        trust_env=False,
    )


def small_pool_client() -> httpx.AsyncClient:
    """The same with a small keep-alive pool (for benchmark 3's diagnosis)."""
    return benchmark_client(keepalive=SMALL_KEEPALIVE)


def kimi_options(fake: FakeUpstream, client: httpx.AsyncClient) -> KimiCompletionOptions:
    """Adapter options for the fake: key and URL passed explicitly, the shared client, default logger."""
    return KimiCompletionOptions(api_key=KIMI_KEY, base_url=fake.kimi_base_url, http_client=client)


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


def router_parameters(fake: FakeUpstream) -> StdioServerParameters:
    """How an MCP host would start colibri-router against the fake (the MCP client adds PATH, HOME…)."""
    env = {
        "COLIBRI_KIMI_API_KEY": KIMI_KEY,
        "COLIBRI_KIMI_BASE_URL": fake.kimi_base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        "COLIBRI_LOG_LEVEL": "info",  # the production default: one log line per call, to stderr
    }
    return StdioServerParameters(command=SERVER_COMMAND, args=[], env=env)


@asynccontextmanager
async def mcp_session(params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[ClientSession]:
    """An initialized session with a freshly spawned server; the SDK stops the process on exit."""
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
