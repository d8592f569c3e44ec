"""Benchmark 12: ``serve --http --workers 2`` against one worker, measured from outside, in one run.

Two servers (SQLite ledger, each its own state directory) run at once against the same lean upstream
(latency 0, SSE); ``CLIENTS`` official MCP clients (one session each) call each for windows of
``WINDOW_S`` seconds, servers alternating. For each: calls per second, and the CPU per call of the
server's whole process tree (uvicorn's supervisor and its workers, ``/proc/<pid>/stat`` of each).
The clients, the upstream and both servers share the machine's cores, so the ratio says what this
machine allows, not what the workers would give on cores of their own.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path

import anyio

from benchmarks import floors
from benchmarks.cpu import tree, tree_cpu_s
from benchmarks.measure import Report, Row, median, ms
from benchmarks.upstream import SERVER_COMMAND, free_port, lean_upstream, router_parameters, spawned_http

WINDOWS = 6


async def run(windows: int = WINDOWS) -> Report:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-workers-") as tmp:
        directory = Path(tmp)
        async with lean_upstream(0.0) as upstream:
            env = {**(router_parameters(upstream.kimi_base_url, upstream.url).env or {}), "PATH": os.environ["PATH"]}
            ports = [free_port() for _ in range(2)]
            with ExitStack() as processes:
                servers = []
                for index, workers in enumerate((1, 2)):
                    command = [SERVER_COMMAND, "serve", "--http", "--port", str(ports[index])]
                    command += ["--workers", str(workers)]
                    server_env = {**env, "COLIBRI_STATE_DIR": str(directory / str(workers))}
                    url, pid = processes.enter_context(
                        spawned_http(command, server_env, directory / f"{workers}.log", ports[index])
                    )
                    servers.append((workers, url, pid))
                return await _measure(servers, windows)


async def _measure(servers: list[tuple[int, str, int]], windows: int) -> Report:
    per_second: dict[int, list[float]] = {workers: [] for workers, _, _ in servers}
    cpu_per_call: dict[int, list[float]] = {workers: [] for workers, _, _ in servers}
    clients_cpu: dict[int, list[float]] = {workers: [] for workers, _, _ in servers}
    async with AsyncExitStack() as stack:
        sessions = {
            workers: [await stack.enter_async_context(floors._session(url)) for _ in range(floors.CLIENTS)]
            for workers, url, _ in servers
        }
        for workers, _, _ in servers:  # warm-up: every worker's imports and ledger file
            for _ in range(40):
                await floors._call(sessions[workers][0])
        for window in range(windows):
            for workers, url, pid in servers[window % 2 :] + servers[: window % 2]:
                pids = tree(pid)
                server = floors._Server(f"{workers}", url, pid)
                cpu_before, clients_before = tree_cpu_s(pids), time.process_time()
                await floors._window(server, [functools.partial(floors._call, s) for s in sessions[workers]])
                clients_cpu[workers].append((time.process_time() - clients_before) / server.calls)
                per_second[workers].append(server.per_second)
                cpu_per_call[workers].append((tree_cpu_s(pids) - cpu_before) / server.calls)
    one, two = median(per_second[1]), median(per_second[2])
    rows = [
        Row(
            f"12 serve --http, {workers} worker{'s' if workers > 1 else ''}",
            f"{median(per_second[workers]):.0f} calls/s at {floors.CLIENTS} clients; "
            f"server CPU {ms(median(cpu_per_call[workers]))} per call (all processes), "
            f"the {floors.CLIENTS} clients' process {ms(median(clients_cpu[workers]))}",
            "— (base)" if workers == 1 else "≥ 1.7x one worker with 4 cores (this machine: information)",
            None,
        )
        for workers in (1, 2)
    ]
    notes = [
        f"12: 2 workers give {two / one:.2f}x one worker's calls/s on {os.cpu_count()} cores; medians of {windows} "
        f"windows of {floors.WINDOW_S:g} s per server, servers alternating."
    ]
    return Report(rows, notes)


if __name__ == "__main__":
    from benchmarks.measure import table

    report = anyio.run(lambda: run(windows=2 if "--quick" in sys.argv else WINDOWS))
    print(table(report.rows))
    for note in report.notes:
        print(note)
