"""Benchmark 13: Python function calls per ``router_call``, counted (cProfile), in process.

Benchmark 9's CPU figures move by about 0.15 ms from run to run on a shared machine, as much as most
single changes to the call path are worth. A count of the Python functions a call runs does not
move: the same calls give the same count, whatever the machine is doing. This counts them for the
official MCP client calling over the SDK's in-memory transport, against:

- the relay floor (``floor_servers.floor_server("relay")``: one tool, one upstream call);
- ``colibri-router``'s own server with ``COLIBRI_STORE=off``;
- the same with its SQLite ledger.

Every function counts, each time it is called, the built-in ones too (``dict.get``, ``isinstance``:
they count for the package that called them); the client's side is included, since a larger result
costs the client too. Two parts are broken
out: the client's check of the result against the tool's output schema (``jsonschema`` and
``referencing``), and colibri-router's own modules. No target: a count is information, and a
function call is not a fixed amount of CPU (benchmark 9 measures CPU).
"""

from __future__ import annotations

import cProfile
import logging
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from benchmarks.floor_servers import floor_server
from benchmarks.measure import Report, Row
from benchmarks.upstream import ANSWER, PROMPT, default_logger_to_devnull, environment, lean_upstream, router_parameters

WARM_UP_CALLS = 30
# The client's validation of a result against the tool's output schema.
SCHEMA_CHECK_PACKAGES = ("jsonschema", "referencing")
OURS = "colibri_router"


@dataclass(frozen=True, slots=True)
class Counted:
    """Function calls per ``router_call``, in all and in two parts."""

    total: float
    schema_check: float
    ours: float


def package_of(filename: str) -> str:
    """The top-level package a profiled function lives in, from its file name; ``""`` for a file
    outside any ``site-packages`` and ``src`` (the standard library, the benchmark)."""
    for root in ("/site-packages/", "/src/"):
        if root in filename:
            return filename.rpartition(root)[2].split("/", 1)[0].removesuffix(".py")
    return ""


Stats = dict[tuple[str, int, str], tuple[Any, ...]]  # cProfile's: (cc, nc, tt, ct, callers) per function


def counted(stats: Stats, calls: int) -> Counted:
    """Per call: every function call in ``stats``, and the two parts. A built-in (cProfile files
    them under ``~``) counts for the package of the function that called it."""
    by_package: Counter[str] = Counter()
    for (filename, _line, _name), (_primitive, number, _own, _total, callers) in stats.items():
        if filename != "~":
            by_package[package_of(filename)] += number
            continue
        for (caller_file, _, _), (_, from_caller, *_) in callers.items():
            by_package[package_of(caller_file)] += from_caller
    schema_check = sum(by_package[package] for package in SCHEMA_CHECK_PACKAGES)
    return Counted(sum(by_package.values()) / calls, schema_check / calls, by_package[OURS] / calls)


async def count(server: MCPServer, calls: int) -> Counted:
    """Function calls per ``router_call`` of the official client against ``server``, in memory."""
    async with Client(server) as client:
        for _ in range(WARM_UP_CALLS):
            await _call(client)
        profile = cProfile.Profile()
        profile.enable()
        try:
            for _ in range(calls):
                await _call(client)
        finally:
            profile.disable()
    profile.create_stats()
    return counted(profile.stats, calls)  # type: ignore[attr-defined]  # set by create_stats


async def _call(client: Client) -> None:
    result = await client.call_tool("router_call", {"prompt": PROMPT})
    if result.is_error or ANSWER not in str(result.content):
        raise RuntimeError(f"router_call failed: {result}")


async def run(calls: int = 200) -> Report:
    from colibri_router.server import build_server

    default_logger_to_devnull()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the SDK's server turns INFO on: a line per call
    async with lean_upstream(0.0) as upstream:
        env = router_parameters(upstream.kimi_base_url, upstream.url).env or {}
        with tempfile.TemporaryDirectory(prefix="colibri-bench-calls-") as state:
            relay = await count(floor_server("relay", upstream.url), calls)
            with environment({**env, "COLIBRI_STATE_DIR": state, "COLIBRI_STORE": "off"}):
                off = await count(build_server(), calls)
            with environment({**env, "COLIBRI_STATE_DIR": state, "COLIBRI_STORE": "on"}):
                sqlite = await count(build_server(), calls)
    rows = [Row("13 relay floor (in process)", _measured(relay, relay), "— (floor)", None)]
    for name, arm in (("COLIBRI_STORE=off", off), ("SQLite ledger", sqlite)):
        rows.append(Row(f"13 router_call, {name} (in process)", _measured(arm, relay), "— (information)", None))
    notes = [
        f"13: Python function calls per router_call (cProfile, built-ins included), official client and server "
        f"in one process over the SDK's in-memory transport, {calls} calls after {WARM_UP_CALLS}; the same "
        "calls give the same count."
    ]
    return Report(rows, notes)


def _measured(arm: Counted, relay: Counted) -> str:
    return (
        f"{arm.total:,.0f} function calls per call ({arm.total / relay.total:.2f}x the relay floor); "
        f"the client's output-schema check {arm.schema_check:,.0f}; colibri_router's own {arm.ours:,.0f}"
    )


if __name__ == "__main__":
    import anyio

    from benchmarks.measure import table

    report = anyio.run(run)
    print(table(report.rows))
    for note in report.notes:
        print(note)
