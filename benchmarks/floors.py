"""Benchmark 9: ``serve --http`` beside the bare SDK floors and LiteLLM's proxy, measured from outside, in one run.

Nine servers run at once against the same lean upstream (latency 0, SSE): a bare SDK stateless
Streamable HTTP server with a trivial tool; the same with a tool that makes the same upstream call and
nothing else (the relay floor, ``floor_servers.py``, answering with SSE as the SDK does by default); the
relay in the SDK's JSON-response mode, which is how ``serve --http`` answers a call without a progress
token (so the SQLite row also says how far it is from that floor); ``colibri-router serve --http`` with its SQLite
ledger; the same with ``COLIBRI_STORE=off``; the same with its ledger in PostgreSQL
(``COLIBRI_DATABASE_URL``: ``COLIBRI_BENCH_DATABASE_URL``'s database, else a throwaway cluster whose own
CPU is measured too, ``postgres_db.py``; skipped with a reason when there is neither; ``--no-postgres``
leaves it out); the SQLite and PostgreSQL servers again with a per-member policy file
(``COLIBRI_HTTP_POLICY``: every rule checked, ``rpm`` and ``tpm`` counted in the store), whose cost is
their CPU per call minus the same server's without; and LiteLLM's proxy in front of the same upstream,
called over plain HTTP (``litellm_proxy.py``: its own environment, skipped with a reason when it cannot be installed;
``--no-litellm`` leaves it out). For each: the sequential p50 of one client's calls (rounds
interleaved across servers), and the calls per second of ``CLIENTS`` clients (an official MCP client
with one session each, or for LiteLLM an httpx client with one keep-alive connection each) over windows
of ``WINDOW_S`` seconds (servers in rotated order), with the CPU time per call of the server's process
tree over those windows (``/proc/<pid>/stat``). The clients share the machine's cores with the servers,
so calls/s are comparable only within one run. The ledger's cost is a ledger row's CPU per call minus
the store-off row's.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from benchmarks import litellm_proxy, postgres_db
from benchmarks.cpu import tree, tree_cpu_s
from benchmarks.measure import Report, Row, median, ms
from benchmarks.upstream import PROMPT, SERVER_COMMAND, free_port, lean_upstream, router_parameters, spawned_http

CLIENTS = 8
WINDOW_S = 5.0
FLOOR_SERVERS = Path(__file__).with_name("floor_servers.py")
SQLITE_ROW = "serve --http, SQLite ledger"
STORE_OFF_ROW = "serve --http, COLIBRI_STORE=off"
POSTGRES_ROW = "serve --http, PostgreSQL ledger"
JSON_FLOOR_ROW = "bare SDK relay, JSON answers"
# The same servers with a team's per-member policy (COLIBRI_HTTP_POLICY): every rule checked on every call,
# rpm and tpm counted in the store. Their cost: their CPU per call minus their store's row's.
POLICY_SUFFIX = ", with a policy (rpm, tpm)"
POLICY = """[defaults]
providers = ["*"]
models = ["*"]
tools = ["*"]
max_cost_usd_per_call = 1000
rpm = 1000000
tpm = 1000000000
"""
LEDGER_TARGET_S = 0.0002  # issue 22: the ledger's cost at most 0.2 ms per call
LEDGER_TARGET = f"ledger ≤ {LEDGER_TARGET_S * 1000:g} ms per call"
Caller = Callable[[], Awaitable[None]]  # one call by one client; raises unless it was answered


@dataclass
class _Server:
    name: str
    url: str
    pid: int
    mcp: bool = True  # else LiteLLM's proxy, called over plain HTTP
    sequential_s: list[float] = field(default_factory=list)
    calls: int = 0
    seconds: float = 0.0
    cpu_s: float = 0.0
    # The throwaway cluster's postmaster, for the PostgreSQL row: its process tree's CPU over the same windows.
    database_pid: int | None = None
    database_cpu_s: float = 0.0

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    @property
    def cpu_per_call_s(self) -> float:
        return self.cpu_s / self.calls if self.calls else 0.0

    @property
    def database_cpu_per_call_s(self) -> float:
        return self.database_cpu_s / self.calls if self.calls else 0.0


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


async def _caller(server: _Server, stack: AsyncExitStack) -> Caller:
    """A client of ``server``, open until ``stack`` closes."""
    if server.mcp:
        return functools.partial(_call, await stack.enter_async_context(_session(server.url)))
    return functools.partial(litellm_proxy.chat, await stack.enter_async_context(litellm_proxy.client()), server.url)


async def _window(server: _Server, callers: list[Caller]) -> None:
    calls = 0
    pids = tree(server.pid)
    database_pids = [] if server.database_pid is None else tree(server.database_pid)
    cpu_before, database_before = tree_cpu_s(pids), tree_cpu_s(database_pids)
    started = time.perf_counter()
    ends = started + WINDOW_S

    async def client(call: Caller) -> None:
        nonlocal calls
        while time.perf_counter() < ends:
            await call()
            calls += 1

    async with anyio.create_task_group() as group:
        for call in callers:
            group.start_soon(client, call)
    server.seconds += time.perf_counter() - started
    server.cpu_s += tree_cpu_s(sorted({*pids, *tree(server.pid)})) - cpu_before
    if server.database_pid is not None:
        database_after = tree_cpu_s(sorted({*database_pids, *tree(server.database_pid)}))
        server.database_cpu_s += database_after - database_before
    server.calls += calls


async def run(sequential: int = 100, windows: int = 2, litellm: bool = True, postgres: bool = True) -> Report:
    """``litellm=False`` leaves LiteLLM's row out, ``postgres=False`` the PostgreSQL row; when either cannot be
    had (installed, started), its row says why."""
    litellm_command, skipped = None, None
    if litellm:
        try:
            litellm_command = await anyio.to_thread.run_sync(litellm_proxy.provision)
        except litellm_proxy.Unavailable as exc:
            skipped = str(exc)
    # Closed last: the servers stop before their database does.
    with ExitStack() as databases, tempfile.TemporaryDirectory(prefix="colibri-bench-floors-") as tmp:
        database, postgres_skipped = await _postgres_database(databases) if postgres else (None, None)
        directory = Path(tmp)
        async with lean_upstream(0.0) as upstream:
            env = {**(router_parameters(upstream.kimi_base_url, upstream.url).env or {}), "PATH": os.environ["PATH"]}
            ports = [free_port() for _ in range(9)]  # the i-th server's is ports[i]; LiteLLM's the last
            policy = directory / "policy.toml"
            policy.write_text(POLICY, encoding="utf-8")

            def serve(name: str, port: int, **settings: str) -> tuple[str, list[str], dict[str, str]]:
                command = [SERVER_COMMAND, "serve", "--http", "--port", str(port)]
                return name, command, {**env, "COLIBRI_STATE_DIR": str(directory / f"state-{port}"), **settings}

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
                    JSON_FLOOR_ROW,
                    [sys.executable, str(FLOOR_SERVERS), "relay-json", str(ports[2]), upstream.url],
                    env,
                ),
                serve(SQLITE_ROW, ports[3]),
                serve(STORE_OFF_ROW, ports[4], COLIBRI_STORE="off"),
                serve(SQLITE_ROW + POLICY_SUFFIX, ports[5], COLIBRI_HTTP_POLICY=str(policy)),
            ]
            if database is not None:  # the way a team points its server at PostgreSQL
                commands.append(serve(POSTGRES_ROW, ports[6], COLIBRI_DATABASE_URL=database.url))
                commands.append(
                    serve(
                        POSTGRES_ROW + POLICY_SUFFIX,
                        ports[7],
                        COLIBRI_DATABASE_URL=database.url,
                        COLIBRI_HTTP_POLICY=str(policy),
                    )
                )
            with ExitStack() as processes:
                servers = [
                    _Server(
                        name,
                        *processes.enter_context(spawned_http(command, server_env, directory / f"{i}.log", ports[i])),
                    )
                    for i, (name, command, server_env) in enumerate(commands)
                ]
                if database is not None:
                    for server in servers:
                        if server.name.startswith(POSTGRES_ROW):
                            server.database_pid = database.postmaster
                if litellm_command is not None:
                    proxy = litellm_proxy.spawned_proxy(litellm_command, upstream.kimi_base_url, directory, ports[8])
                    try:
                        url, pid = processes.enter_context(proxy)
                    except RuntimeError as exc:  # it exited, or was not ready within a minute
                        print(exc, file=sys.stderr)
                        skipped = "the proxy did not start (its log is on stderr)"
                    else:
                        servers.append(_Server(litellm_proxy.NAME, url, pid, mcp=False))
                await _measure(servers, sequential, windows)
    return _report(servers, sequential, windows, litellm, skipped, postgres=postgres, postgres_skipped=postgres_skipped)


async def _postgres_database(stack: ExitStack) -> tuple[postgres_db.Database | None, str | None]:
    """The PostgreSQL row's database, kept until ``stack`` closes; or None and the reason there is none."""
    try:
        return await anyio.to_thread.run_sync(stack.enter_context, postgres_db.database()), None
    except postgres_db.Unavailable as exc:
        return None, str(exc)


async def _measure(servers: list[_Server], sequential: int, windows: int) -> None:
    turns = len(servers)
    async with AsyncExitStack() as stack:
        callers = {id(s): [await _caller(s, stack) for _ in range(CLIENTS)] for s in servers}
        for server in servers:  # warm-up: imports, connections, the ledger's file
            for _ in range(20):
                await callers[id(server)][0]()
        for round_number in range(sequential):
            for server in servers[round_number % turns :] + servers[: round_number % turns]:
                started = time.perf_counter()
                await callers[id(server)][0]()
                server.sequential_s.append(time.perf_counter() - started)
        for window in range(windows):
            for server in servers[window % turns :] + servers[: window % turns]:
                await _window(server, callers[id(server)])


def _report(
    servers: list[_Server],
    sequential: int,
    windows: int,
    litellm: bool,
    skipped: str | None,
    *,
    postgres: bool = True,
    postgres_skipped: str | None = None,
) -> Report:
    """The rows; ``skipped`` and ``postgres_skipped`` say why LiteLLM's and the PostgreSQL row did not run."""
    relay = servers[1]
    json_floor = next((s for s in servers if s.name == JSON_FLOOR_ROW), None)
    store_off = next((s for s in servers if s.name == STORE_OFF_ROW), None)
    proxy = next((s for s in servers if not s.mcp), None)
    rows = []
    for server in servers:
        p50 = median(server.sequential_s)
        measured = (
            f"p50 {ms(p50)} sequential; {server.per_second:.0f} calls/s at {CLIENTS} clients "
            f"({server.per_second / relay.per_second:.2f}x the relay floor); "
            f"server CPU {ms(server.cpu_per_call_s)} per call"
        )
        if server.name.startswith(POSTGRES_ROW) and server.database_pid is not None:
            measured += f" (+{ms(server.database_cpu_per_call_s)} in PostgreSQL)"
        without_policy = next((s for s in servers if s.name + POLICY_SUFFIX == server.name), None)
        if without_policy is not None:
            added = server.cpu_per_call_s - without_policy.cpu_per_call_s
            measured += (
                f"; policy cost {ms(added, sign=True)} CPU per call, p50 "
                f"{ms(p50 - median(without_policy.sequential_s), sign=True)} (row - row without policy)"
            )
            if server.database_pid is not None:
                database_added = server.database_cpu_per_call_s - without_policy.database_cpu_per_call_s
                measured += f", {ms(database_added, sign=True)} in PostgreSQL"
        ledger_cost = None
        if store_off is not None and server.name in (SQLITE_ROW, POSTGRES_ROW):
            ledger_cost = server.cpu_per_call_s - store_off.cpu_per_call_s
            measured += f"; ledger cost {ms(ledger_cost, sign=True)} CPU per call (row - store-off row)"
        target, met = "— (floor)", None
        if server.name == SQLITE_ROW:
            target = "≥ 0.9x relay calls/s; CPU ≤ relay + 0.4 ms; p50 ≤ relay + 0.8 ms"
            met = (
                server.per_second >= 0.9 * relay.per_second
                and server.cpu_per_call_s <= relay.cpu_per_call_s + 0.0004
                and p50 <= median(relay.sequential_s) + 0.0008
            )
            if json_floor is not None:
                measured += (
                    f"; against the JSON-answer relay: {server.per_second / json_floor.per_second:.2f}x its calls/s, "
                    f"CPU {ms(server.cpu_per_call_s - json_floor.cpu_per_call_s, sign=True)}, "
                    f"p50 {ms(p50 - median(json_floor.sequential_s), sign=True)}"
                )
            if proxy is not None:
                measured += (
                    f"; {server.per_second / proxy.per_second:.2f}x LiteLLM's calls/s, "
                    f"{p50 / median(proxy.sequential_s):.2f}x its p50"
                )
        elif server.name == POSTGRES_ROW:
            target = LEDGER_TARGET
            met = None if ledger_cost is None else ledger_cost <= LEDGER_TARGET_S
            measured += (
                f"; {postgres_db.FSYNC_NOTE}"
                if server.database_pid is not None
                else f"; PostgreSQL's CPU not measured (the database of {postgres_db.URL_VARIABLE})"
            )
        elif server.name in (STORE_OFF_ROW, JSON_FLOOR_ROW) or not server.mcp or without_policy is not None:
            target = "— (information)"
        rows.append(Row(f"9 {server.name}", measured, target, met))
    if postgres_skipped is not None:
        rows.append(Row(f"9 {POSTGRES_ROW}", f"skipped: {postgres_skipped}", LEDGER_TARGET, None))
    if skipped is not None:
        rows.append(Row(f"9 {litellm_proxy.NAME}", f"skipped: {skipped}", "— (information)", None))
    note = (
        f"9: {sequential} sequential calls per server (interleaved), {windows} windows of {WINDOW_S:g} s per server "
        f"with {CLIENTS} clients (official MCP clients; for LiteLLM, httpx clients streaming /v1/chat/completions); "
        f"lean upstream, latency 0, SSE; CPU of each server's process tree."
    )
    if any(server.name == POSTGRES_ROW for server in servers):
        note += (
            " PostgreSQL row: the ledger's cost (the target) is the server's CPU per call minus the store-off "
            "row's; the database's own CPU per call, when measured (its postmaster's process tree over the same "
            "windows), is shown beside it, not in it."
        )
    note += "" if postgres else " PostgreSQL left out (--no-postgres)."
    note += "" if litellm else " LiteLLM left out (--no-litellm)."
    return Report(rows, [note])


def _options(argv: list[str] | None = None) -> dict[str, Any]:
    """``run``'s arguments from the command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.floors", description=__doc__.partition("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 sequential rounds and 1 window: a smoke test")
    parser.add_argument("--no-litellm", action="store_true", help="leave out LiteLLM's proxy (no install, no row)")
    parser.add_argument(
        "--no-postgres", action="store_true", help="leave out the PostgreSQL row (no cluster started, no row)"
    )
    args = parser.parse_args(argv)
    return {
        "sequential": 20 if args.quick else 100,
        "windows": 1 if args.quick else 2,
        "litellm": not args.no_litellm,
        "postgres": not args.no_postgres,
    }


if __name__ == "__main__":
    from benchmarks.measure import table

    options = _options()
    report = anyio.run(lambda: run(**options))
    print(table(report.rows))
    for note in report.notes:
        print(note)
