"""Run every benchmark and print one markdown table: ``uv run python -m benchmarks.run [--quick]``.

Each benchmark measures its subject against a baseline in the same run (see benchmarks/measure.py) and
yields table rows. The run reports and never gates: a missed target still exits 0; a benchmark that
crashes (or overruns its time limit) is shown as CRASHED, its traceback goes to stderr, and the run
exits 1 after the others have run.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import anyio

from benchmarks import (
    ask_many,
    assembly,
    files,
    floors,
    inprocess,
    key_pool,
    ledger,
    memory,
    over_http,
    python_calls,
    startup,
    stdio,
)
from benchmarks.measure import Plan, Report, Row, table


@dataclass(frozen=True, slots=True)
class Benchmark:
    key: str
    title: str
    run: Callable[[], Awaitable[Report]]
    limit_s: float  # a hang becomes a crash instead of a stuck run


def benchmarks(quick: bool) -> list[Benchmark]:
    def pick(full: int, fast: int) -> int:
        return fast if quick else full

    call_plan = Plan(warmup=pick(50, 10), rounds=pick(400, 40))
    json_plan = Plan(warmup=pick(30, 5), rounds=pick(200, 20))
    e2e_plan = Plan(warmup=pick(30, 5), rounds=pick(300, 30))
    burst_plan = Plan(warmup=1, rounds=pick(5, 1))
    spawn_plan = Plan(warmup=1, rounds=pick(10, 2))
    http_plan = Plan(warmup=pick(20, 5), rounds=pick(200, 20))
    throughput_plan = Plan(warmup=1, rounds=pick(3, 1))
    many_plan = Plan(warmup=pick(3, 1), rounds=pick(30, 5))
    stream = assembly.Sizes(
        deltas=pick(200_000, 20_000),
        rounds=Plan(warmup=1, rounds=pick(5, 2)),
        memory_bytes=pick(50_000_000, 5_000_000),
    )
    return [
        Benchmark("inprocess", "in-process overhead", lambda: inprocess.run(call_plan, json_plan), 90),
        Benchmark("e2e", "end to end over stdio", lambda: stdio.run_latency(e2e_plan), 90),
        Benchmark("concurrency", "100 concurrent calls", lambda: stdio.run_concurrency(burst_plan), 90),
        Benchmark("startup", "start-up", lambda: startup.run(spawn_plan), 120),
        Benchmark("assembly", "stream assembly", lambda: assembly.run(stream), 120),
        Benchmark("http", "router_call over HTTP vs stdio", lambda: over_http.run_latency(http_plan), 120),
        Benchmark("throughput", "HTTP calls/s by workers", lambda: over_http.run_throughput(throughput_plan), 180),
        Benchmark("many", "router_ask_many vs its slowest model", lambda: ask_many.run(many_plan), 120),
        Benchmark("files", "files: repository glob and image set", lambda: files.run(pick(50, 5)), 120),
        Benchmark(
            "floors",
            "serve --http beside the SDK floors",
            lambda: floors.run(sequential=pick(100, 20), windows=pick(2, 1)),
            300,  # six servers, a PostgreSQL cluster, and on the first run LiteLLM's install
        ),
        Benchmark("ledger", "ledger row cost", ledger.run, 120),
        Benchmark("memory", "serve --http memory", lambda: memory.run(1_000, pick(10_000, 2_000)), 300),
        Benchmark("calls", "Python function calls per router_call", lambda: python_calls.run(pick(200, 20)), 120),
        Benchmark("keys", "a pool of three keys vs one key", lambda: key_pool.run(call_plan), 120),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke test that the run works")
    parser.add_argument("--only", metavar="NAME", action="append", help="run only this benchmark (repeatable)")
    args = parser.parse_args(argv)
    selected = [b for b in benchmarks(args.quick) if not args.only or b.key in args.only]
    if not selected:
        parser.error(f"--only: choose from {', '.join(b.key for b in benchmarks(args.quick))}")

    started = time.perf_counter()
    rows: list[Row] = []
    notes: list[str] = []
    crashed = False
    for bench in selected:
        print(f"running {bench.key} ({bench.title})…", file=sys.stderr, flush=True)
        bench_started = time.perf_counter()
        try:
            report = anyio.run(_limited, bench)
        except Exception as exc:
            crashed = True
            traceback.print_exc()
            cause = _first_leaf(exc)
            rows.append(Row(bench.title, f"CRASHED: {type(cause).__name__}: {cause}", "—", False))
        else:
            rows += report.rows
            notes += report.notes
        print(f"  {bench.key} took {time.perf_counter() - bench_started:.1f} s", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started

    mode = "quick" if args.quick else "full"
    print(
        f"colibri-router benchmarks ({mode} mode): Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, run took {elapsed:.0f} s\n"
    )
    print(table(rows))
    for note in notes:
        print(f"\n{note}")
    return 1 if crashed else 0


async def _limited(bench: Benchmark) -> Report:
    with anyio.fail_after(bench.limit_s):
        return await bench.run()


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups, which task groups wrap failures in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


if __name__ == "__main__":
    sys.exit(main())
