"""Benchmark 7: ``serve --http`` beside the bare SDK floors, measured from outside, in one run.

Four servers run at once against the same lean upstream (latency 0, SSE): a bare SDK stateless
Streamable HTTP server with a trivial tool; the same with a tool that makes the same upstream call and
nothing else (the relay floor, ``floor_servers.py``); ``colibri-router serve --http`` with its SQLite
ledger; and the same with ``COLIBRI_STORE=off``. For each: the sequential p50 of one official MCP
client's calls (rounds interleaved across servers), and the calls per second of ``CLIENTS`` official
clients (one session each) over windows of ``WINDOW_S`` seconds (servers in rotated order), with the
server process's CPU time per call over those windows (``/proc/<pid>/stat``). The clients share the
machine's cores with the servers, so calls/s are comparable only within one run.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from benchmarks.measure import Report, Row, median, ms
from benchmarks.upstream import PROMPT, SERVER_COMMAND, free_port, lean_upstream, router_parameters, spawned_http

CLIENTS = 8
WINDOW_S = 5.0
FLOOR_SERVERS = Path(__file__).with_name("floor_servers.py")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class _Server:
    name: str
    url: str
    pid: int
    sequential_s: list[float] = field(default_factory=list)
    calls: int = 0
    seconds: float = 0.0
    cpu_s: float = 0.0

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    @property
    def cpu_per_call_s(self) -> float:
        return self.cpu_s / self.calls if self.calls else 0.0


def _cpu_s(pid: int) -> float:
    """The process's user and system CPU seconds so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


@asynccontextmanager
async def _session(url: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(timeout=60) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _call(session: ClientSession) -> None:
    result = await session.call_tool("router_call", {"prompt": PROMPT})
    if result.is_error:
        raise RuntimeError(f"router_call failed: {result}")


async def _window(server: _Server, sessions: list[ClientSession]) -> None:
    calls = 0
    cpu_before, started = _cpu_s(server.pid), time.perf_counter()
    ends = started + WINDOW_S

    async def client(session: ClientSession) -> None:
        nonlocal calls
        while time.perf_counter() < ends:
            await _call(session)
            calls += 1

    async with anyio.create_task_group() as group:
        for session in sessions:
            group.start_soon(client, session)
    server.seconds += time.perf_counter() - started
    server.cpu_s += _cpu_s(server.pid) - cpu_before
    server.calls += calls


async def run(sequential: int = 100, windows: int = 2) -> Report:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-floors-") as tmp:
        directory = Path(tmp)
        async with lean_upstream(0.0) as upstream:
            env = {**(router_parameters(upstream.kimi_base_url, upstream.url).env or {}), "PATH": os.environ["PATH"]}
            sqlite_env = {**env, "COLIBRI_STATE_DIR": str(directory / "sqlite")}
            off_env = {**env, "COLIBRI_STATE_DIR": str(directory / "off"), "COLIBRI_STORE": "off"}
            ports = [free_port() for _ in range(4)]
            commands = [
                (
                    "bare SDK server, trivial tool",
                    [sys.executable, str(FLOOR_SERVERS), "trivial", str(ports[0]), upstream.url],
                    env,
                ),
                (
                    "bare SDK relay (the floor)",
                    [sys.executable, str(FLOOR_SERVERS), "relay", str(ports[1]), upstream.url],
                    env,
                ),
                (
                    "serve --http, SQLite ledger",
                    [SERVER_COMMAND, "serve", "--http", "--port", str(ports[2])],
                    sqlite_env,
                ),
                (
                    "serve --http, COLIBRI_STORE=off",
                    [SERVER_COMMAND, "serve", "--http", "--port", str(ports[3])],
                    off_env,
                ),
            ]
            with ExitStack() as processes:
                servers = [
                    _Server(
                        name,
                        *processes.enter_context(spawned_http(command, server_env, directory / f"{i}.log", ports[i])),
                    )
                    for i, (name, command, server_env) in enumerate(commands)
                ]
                await _measure(servers, sequential, windows)
    return _report(servers, sequential, windows)


async def _measure(servers: list[_Server], sequential: int, windows: int) -> None:
    async with AsyncExitStack() as stack:
        sessions = {id(s): [await stack.enter_async_context(_session(s.url)) for _ in range(CLIENTS)] for s in servers}
        for server in servers:  # warm-up: imports, connections, the ledger's file
            for _ in range(20):
                await _call(sessions[id(server)][0])
        for round_number in range(sequential):
            for server in servers[round_number % 4 :] + servers[: round_number % 4]:
                started = time.perf_counter()
                await _call(sessions[id(server)][0])
                server.sequential_s.append(time.perf_counter() - started)
        for window in range(windows):
            for server in servers[window % 4 :] + servers[: window % 4]:
                await _window(server, sessions[id(server)])


def _report(servers: list[_Server], sequential: int, windows: int) -> Report:
    relay = servers[1]
    rows = []
    for server in servers:
        measured = (
            f"p50 {ms(median(server.sequential_s))} sequential; {server.per_second:.0f} calls/s at {CLIENTS} clients "
            f"({server.per_second / relay.per_second:.2f}x the relay floor); "
            f"server CPU {ms(server.cpu_per_call_s)} per call"
        )
        target, met = "— (floor)", None
        if server.name.endswith("SQLite ledger"):
            target = "≥ 0.9x relay calls/s; CPU ≤ relay + 0.4 ms; p50 ≤ relay + 0.8 ms"
            met = (
                server.per_second >= 0.9 * relay.per_second
                and server.cpu_per_call_s <= relay.cpu_per_call_s + 0.0004
                and median(server.sequential_s) <= median(relay.sequential_s) + 0.0008
            )
        elif "STORE=off" in server.name:
            target = "— (information)"
        rows.append(Row(f"9 {server.name}", measured, target, met))
    notes = [
        f"9: {sequential} sequential calls per server (interleaved), {windows} windows of {WINDOW_S:g} s per server "
        f"with {CLIENTS} official MCP clients; lean upstream, latency 0, SSE."
    ]
    return Report(rows, notes)


if __name__ == "__main__":
    from benchmarks.measure import table

    quick = "--quick" in sys.argv
    report = anyio.run(lambda: run(sequential=20 if quick else 100, windows=1 if quick else 2))
    print(table(report.rows))
    for note in report.notes:
        print(note)
