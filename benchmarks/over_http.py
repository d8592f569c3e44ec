"""Benchmark 6: ``router_call`` over Streamable HTTP (``colibri-router serve --http``), for information.

6a. Latency: sequential ``router_call`` round trips from the official MCP client over HTTP
    (``streamable_http_client``) against the same calls over stdio, two spawned servers on the same
    lean upstream (latency 0), interleaved; reported as the added milliseconds per call over HTTP,
    p50 and p90 of the round-by-round differences.
6b. Throughput: calls per second with ``--workers 1`` and ``--workers 4``: bursts of ``BURST``
    ``tools/call`` POSTs, ``CONCURRENCY`` in flight at a time, each read to the end of its SSE answer,
    by a lean raw-HTTP client (httpx) so that the client's own CPU is small next to the servers'.
    Both servers run at once and the rounds alternate; the machine's cores are shared by the client,
    the lean upstream and the workers, which bounds what more workers can add.

Each server keeps its ledger in its own temporary state directory and logs one line per call to a
temporary file, as in production.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from benchmarks.measure import Plan, Report, Row, interleave, median, ms, paired_differences, percentile
from benchmarks.upstream import (
    ANSWER,
    PROMPT,
    SERVER_COMMAND,
    free_port,
    lean_upstream,
    mcp_session,
    router_parameters,
    spawned_http,
)

BURST = 400
CONCURRENCY = 32
WORKERS = (1, 4)
_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "router_call", "arguments": {"prompt": PROMPT}},
}
_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@contextmanager
def _http_server(env: dict[str, str], log: Path, workers: int) -> Iterator[str]:
    """``serve --http`` on a free loopback port; yields the MCP URL once /healthz answers."""
    port = free_port()
    command = [SERVER_COMMAND, "serve", "--http", "--port", str(port), "--workers", str(workers)]
    with spawned_http(command, env, log, port) as (url, _pid):
        yield url


@asynccontextmanager
async def _environment() -> AsyncIterator[tuple[dict[str, str], Path]]:
    """The lean upstream, and the environment and log directory of the servers under test."""
    with tempfile.TemporaryDirectory(prefix="colibri-bench-http-") as tmp:
        async with lean_upstream(0.0) as upstream:
            env = {**(router_parameters(upstream.kimi_base_url, upstream.url).env or {}), "PATH": os.environ["PATH"]}
            yield env, Path(tmp)


def _state(env: dict[str, str], directory: Path, name: str) -> dict[str, str]:
    (directory / name).mkdir()
    return {**env, "COLIBRI_STATE_DIR": str(directory / name)}


async def _check(result: object) -> None:
    structured = getattr(result, "structured_content", None) or {}
    if getattr(result, "is_error", True) or structured.get("content") != ANSWER:
        raise RuntimeError(f"router_call failed: {result}")


async def run_latency(plan: Plan) -> Report:
    async with _environment() as (env, directory):
        stdio_env = _state(env, directory, "stdio")
        params = router_parameters(stdio_env["COLIBRI_KIMI_BASE_URL"], stdio_env["ANTHROPIC_BASE_URL"])
        params.env = stdio_env
        with (
            _http_server(_state(env, directory, "http"), directory / "http.log", workers=1) as url,
            (directory / "stdio.log").open("w") as errlog,
        ):
            async with (
                mcp_session(params, errlog) as stdio,
                httpx2.AsyncClient(timeout=60) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as http,
            ):
                await http.initialize()

                async def over_http() -> None:
                    await _check(await http.call_tool("router_call", {"prompt": PROMPT}))

                async def over_stdio() -> None:
                    await _check(await stdio.call_tool("router_call", {"prompt": PROMPT}))

                http_s, stdio_s = await interleave([over_http, over_stdio], plan)
    added = paired_differences(http_s, stdio_s)
    measured = (
        f"{ms(percentile(added, 0.5), sign=True)} at p50, {ms(percentile(added, 0.9), sign=True)} at p90 "
        f"({len(added)} paired calls; medians {ms(median(http_s))} over HTTP vs {ms(median(stdio_s))} over stdio)"
    )
    return Report([Row("6a router_call over HTTP vs stdio: added per call", measured, "— (report)", None)])


async def _burst(client: httpx.AsyncClient, url: str) -> None:
    """``BURST`` calls, ``CONCURRENCY`` at a time, each answer read and checked."""
    limiter = anyio.Semaphore(CONCURRENCY)

    async def one(request_id: int) -> None:
        async with limiter:
            response = await client.post(url, content=json.dumps({**_CALL, "id": request_id}), headers=_HEADERS)
            if response.status_code != 200 or ANSWER not in response.text:
                raise RuntimeError(f"router_call over HTTP failed: {response.status_code} {response.text[:300]}")

    async with anyio.create_task_group() as group:
        for request_id in range(BURST):
            group.start_soon(one, request_id)


async def run_throughput(plan: Plan) -> Report:
    async with _environment() as (env, directory):
        with (
            _http_server(_state(env, directory, "one"), directory / "one.log", workers=WORKERS[0]) as one,
            _http_server(_state(env, directory, "four"), directory / "four.log", workers=WORKERS[1]) as four,
        ):
            limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
            async with httpx.AsyncClient(timeout=120, limits=limits, trust_env=False) as client:

                async def with_one() -> None:
                    await _burst(client, one)

                async def with_four() -> None:
                    await _burst(client, four)

                one_s, four_s = await interleave([with_one, with_four], plan)
    rate_one, rate_four = BURST / median(one_s), BURST / median(four_s)
    measured = (
        f"{rate_one:.0f} calls/s with 1 worker, {rate_four:.0f} calls/s with 4 ({rate_four / rate_one:.2f}x; "
        f"median of {len(one_s)} bursts of {BURST} calls, {CONCURRENCY} in flight, upstream latency 0, "
        f"{os.cpu_count()} cores shared by client, upstream and workers)"
    )
    return Report([Row("6b router_call over HTTP: throughput by workers", measured, "— (report)", None)])
