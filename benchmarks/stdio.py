"""Benchmarks 2 and 3: ``router_call`` over stdio from the official MCP client, one spawned server.

The spawned server's Kimi base URL points at the lean upstream (``lean_upstream.py``, its own process).

2. Latency: sequential ``router_call`` round trips vs the in-process adapter call
   (``create_kimi_completion``) against the same upstream at latency 0, interleaved; reported as the
   added milliseconds per call, p50 (the target) and p90 of the round-by-round differences.
3. Concurrency: bursts of 100 concurrent ``router_call``s over one session while the upstream waits
   0.2 s before every reply; the wall time of a burst against the ideal 0.2 s and against the floor
   measured in the same rounds: 100 concurrent bare httpx streams (``inprocess.bare_stream``) on a
   client with the server's pool limits. Also interleaved, for information: 100 concurrent
   in-process adapter calls on such a client, which splits the excess over the floor into the
   adapter's share and the MCP/stdio share.

The server's stderr (one JSON log line per call, as in production) goes to a temporary file that is
printed if the benchmark fails.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import ClientSession

from benchmarks.inprocess import adapter_request, bare_stream
from benchmarks.measure import (
    Plan,
    Report,
    Row,
    interleave,
    median,
    ms,
    paired_differences,
    paired_ratios,
    percentile,
)
from benchmarks.upstream import (
    ANSWER,
    PROMPT,
    benchmark_client,
    default_logger_to_devnull,
    kimi_options,
    lean_upstream,
    mcp_session,
    router_parameters,
    server_pool_limits,
)
from colibri_router.adapters import KimiCompletionOptions, create_kimi_completion

TARGET_ADDED_P50_S = 0.003
BURST = 100
LATENCY_S = 0.2
TARGET_BURST_S = 0.5


@asynccontextmanager
async def _setup(latency_s: float) -> AsyncIterator[tuple[ClientSession, KimiCompletionOptions]]:
    """The lean upstream, a router session against it, and adapter options for the in-process arms."""
    default_logger_to_devnull()
    with tempfile.TemporaryDirectory(prefix="colibri-bench-") as tmp:
        log_path = Path(tmp) / "server-stderr.log"
        try:
            async with lean_upstream(latency_s) as upstream:
                # The lean upstream has no Anthropic route: a Claude call would get a 404, on loopback.
                params = router_parameters(upstream.kimi_base_url, anthropic_base_url=upstream.url)
                with log_path.open("w") as errlog:
                    async with benchmark_client() as client, mcp_session(params, errlog) as session:
                        yield session, kimi_options(upstream.kimi_base_url, client)
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


def _burst(call: Callable[[], Awaitable[object]]) -> Callable[[], Awaitable[None]]:
    """An arm that runs ``BURST`` concurrent ``call()``s and returns when all are done."""

    async def burst() -> None:
        async with anyio.create_task_group() as calls:
            for _ in range(BURST):
                calls.start_soon(call)

    return burst


async def run_concurrency(plan: Plan) -> Report:
    async with _setup(latency_s=LATENCY_S) as (session, options), benchmark_client() as bare_client:
        request = await adapter_request(options)
        e2e_s, in_process_s, bare_s = await interleave(
            [
                _burst(lambda: _router_call(session)),
                _burst(lambda: create_kimi_completion(PROMPT, options)),
                _burst(lambda: bare_stream(bare_client, request)),
            ],
            plan,
        )
    wall, floor = median(e2e_s), median(bare_s)
    over_floor = median(paired_ratios(e2e_s, bare_s))
    limits = server_pool_limits()
    pool = f"max_connections={limits.max_connections}, max_keepalive_connections={limits.max_keepalive_connections}"
    measured = (
        f"{wall:.3f} s wall = {wall / LATENCY_S:.2f}x the ideal {LATENCY_S} s = {over_floor:.2f}x the "
        f"bare-httpx burst of row 3-baseline (median of {len(e2e_s)} bursts / paired ratios; worst {max(e2e_s):.3f} s)"
    )
    baseline = (
        f"{floor:.3f} s wall = {floor / LATENCY_S:.2f}x the ideal (median of {len(bare_s)} bursts, "
        f"worst {max(bare_s):.3f} s; one client with the server's pool limits: {pool})"
    )
    in_process = (
        f"{median(in_process_s):.3f} s wall = {median(paired_ratios(in_process_s, bare_s)):.2f}x the bare-httpx "
        f"burst (median of {len(in_process_s)} bursts / paired ratios; same pool limits)"
    )
    return Report(
        [
            Row(
                f"3 {BURST} concurrent router_call over one session, upstream {LATENCY_S} s",
                measured,
                f"< {TARGET_BURST_S} s",
                wall < TARGET_BURST_S,
            ),
            Row(f"3-baseline {BURST} concurrent bare httpx streams, same upstream", baseline, "— (floor)", None),
            Row(
                f"3-in-process {BURST} concurrent create_kimi_completion, same upstream",
                in_process,
                "— (information)",
                None,
            ),
        ]
    )
