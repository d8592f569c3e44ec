"""Benchmarks 2 and 3: ``router_call`` over stdio from the official MCP client, one spawned server.

2. Latency: sequential ``router_call`` round trips vs the in-process adapter call
   (``create_kimi_completion``) against the same fake at latency 0, interleaved; reported as the
   added milliseconds per call, p50 (the target) and p90 of the round-by-round differences.
3. Concurrency: bursts of 100 concurrent ``router_call``s over one session while the fake waits
   0.2 s before every reply; the wall time of a burst against the ideal 0.2 s. Interleaved with it,
   for diagnosis, bursts of 100 in-process adapter calls on a client with the server's pool limits
   and on one that keeps fewer idle connections: httpcore's pool does work quadratic in its number
   of connections on every request it adds or finishes, which dominates a burst once many idle
   keep-alive connections are pooled.

The server's stderr (one JSON log line per call, as in production) goes to a temporary file that is
printed if the benchmark fails.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import anyio
from mcp import ClientSession

from benchmarks.measure import Plan, Report, Row, interleave, median, ms, paired_differences, percentile
from benchmarks.upstream import (
    ANSWER,
    PROMPT,
    SERVER_KEEPALIVE,
    SMALL_KEEPALIVE,
    FakeUpstream,
    benchmark_client,
    default_logger_to_devnull,
    kimi_options,
    mcp_session,
    router_parameters,
    small_pool_client,
)
from colibri_router.adapters import KimiCompletionOptions, create_kimi_completion

TARGET_ADDED_P50_S = 0.003
BURST = 100
LATENCY_S = 0.2
TARGET_BURST_S = 0.5


@asynccontextmanager
async def _setup(latency_s: float) -> AsyncIterator[tuple[ClientSession, KimiCompletionOptions]]:
    """The fake, a router session against it, and adapter options for the in-process arm."""
    default_logger_to_devnull()
    with tempfile.TemporaryDirectory(prefix="colibri-bench-") as tmp:
        log_path = Path(tmp) / "server-stderr.log"
        try:
            with FakeUpstream() as fake, log_path.open("w") as errlog:
                fake.latency_s = latency_s
                async with benchmark_client() as client, mcp_session(router_parameters(fake), errlog) as session:
                    yield session, kimi_options(fake, client)
                if fake.violations:
                    raise RuntimeError(f"the fake saw wire violations: {fake.violations[:3]}")
        except BaseException:
            tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
            print(f"colibri-router stderr (tail):\n{tail}", file=sys.stderr)
            raise


async def _router_call(session: ClientSession) -> None:
    result = await session.call_tool("router_call", {"prompt": PROMPT})
    if result.is_error or (result.structured_content or {}).get("content") != ANSWER:
        raise RuntimeError(f"router_call failed: {result.content}")


async def run_latency(plan: Plan) -> Report:
    async with _setup(latency_s=0.0) as (session, options):

        async def e2e() -> None:
            await _router_call(session)

        async def in_process() -> None:
            await create_kimi_completion(PROMPT, options)

        e2e_s, in_process_s = await interleave([e2e, in_process], plan)
    added = paired_differences(e2e_s, in_process_s)
    p50, p90 = percentile(added, 0.5), percentile(added, 0.9)
    measured = (
        f"{ms(p50, sign=True)} at p50, {ms(p90, sign=True)} at p90 ({len(added)} paired calls; "
        f"medians {ms(median(e2e_s))} over stdio vs {ms(median(in_process_s))} in-process)"
    )
    row = Row(
        "2 end to end over stdio: added per call", measured, f"p50 < {ms(TARGET_ADDED_P50_S)}", p50 < TARGET_ADDED_P50_S
    )
    return Report([row])


async def run_concurrency(plan: Plan) -> Report:
    async with _setup(latency_s=LATENCY_S) as (session, options), small_pool_client() as small_pool:
        small_pool_options = replace(options, http_client=small_pool)

        async def burst_e2e() -> None:
            async with anyio.create_task_group() as calls:
                for _ in range(BURST):
                    calls.start_soon(_router_call, session)

        async def burst_in_process() -> None:
            async with anyio.create_task_group() as calls:
                for _ in range(BURST):
                    calls.start_soon(create_kimi_completion, PROMPT, options)

        async def burst_small_pool() -> None:
            async with anyio.create_task_group() as calls:
                for _ in range(BURST):
                    calls.start_soon(create_kimi_completion, PROMPT, small_pool_options)

        e2e_s, in_process_s, small_pool_s = await interleave([burst_e2e, burst_in_process, burst_small_pool], plan)
    wall = median(e2e_s)
    measured = (
        f"{wall:.3f} s wall = {wall / LATENCY_S:.2f}x the ideal {LATENCY_S} s "
        f"(median of {len(e2e_s)} bursts, worst {max(e2e_s):.3f} s)"
    )
    name = f"3 {BURST} concurrent router_call over one session, upstream {LATENCY_S} s"
    diagnosis = (
        f"{median(in_process_s):.3f} s with the server's pool (keep-alive {SERVER_KEEPALIVE}) vs "
        f"{median(small_pool_s):.3f} s with keep-alive {SMALL_KEEPALIVE} (median of {len(in_process_s)} bursts each; "
        f"these share the GIL with the fake's threads, compare them with each other only)"
    )
    return Report(
        [
            Row(name, measured, f"< {TARGET_BURST_S} s", wall < TARGET_BURST_S),
            Row(f"3b {BURST} concurrent in-process adapter calls (diagnosis)", diagnosis, "— (information)", None),
        ]
    )
