"""Benchmark 4: spawn → ``initialize`` answered, colibri-router vs a minimal server on the same SDK.

Each round spawns both servers once (order rotated), timing from just before the spawn to the
``initialize`` result; the shutdown that follows is not timed. Both run on this interpreter: the
``colibri-router`` console script and ``python benchmarks/minimal_server.py``.

The note under the table lists the top-level packages colibri-router imports at start-up beyond
what the minimal server imports: a child interpreter run with ``-X importtime`` imports
``mcp.server.mcpserver`` (all the minimal server needs), then follows the ``colibri-router serve``
path up to ``build_server()`` and the hello line; the modules that appeared after the first import
are grouped by top-level package, with their summed self import time and the module that first
pulled each in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import TextIO

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from benchmarks.measure import Plan, Report, Row, interleave_self_timed, median, ms, paired_ratios
from benchmarks.upstream import MINIMAL_SERVER, NO_UPSTREAM, ROOT, router_parameters

TARGET_RATIO = 1.1

# Runs in a child interpreter under -X importtime; prints the modules the serve path adds.
_IMPORT_PROBE = """
import json, sys
import mcp.server.mcpserver
before = set(sys.modules)
from colibri_router.cli import build_parser, say_hello
from colibri_router.logs import configure_logging
build_parser().parse_args([])
configure_logging()
from colibri_router.server import build_server
build_server()
say_hello(sys.stderr)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


async def _spawn_to_initialize(params: StdioServerParameters, expected_name: str, errlog: TextIO) -> float:
    start = time.perf_counter()
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        result = await session.initialize()
        elapsed = time.perf_counter() - start
        if result.server_info.name != expected_name:
            raise RuntimeError(f"expected server {expected_name!r}, got {result.server_info.name!r}")
    return elapsed


async def run(plan: Plan) -> Report:
    with tempfile.TemporaryFile("w+") as errlog:
        router = router_parameters(NO_UPSTREAM, NO_UPSTREAM)  # start-up makes no call
        minimal = StdioServerParameters(command=sys.executable, args=[str(MINIMAL_SERVER)], env=router.env)

        async def spawn_router() -> float:
            return await _spawn_to_initialize(router, "colibri-router", errlog)

        async def spawn_minimal() -> float:
            return await _spawn_to_initialize(minimal, "minimal", errlog)

        router_s, minimal_s = await interleave_self_timed([spawn_router, spawn_minimal], plan)
    ratio = median(paired_ratios(router_s, minimal_s))
    measured = (
        f"{ratio:.3f}x (median of {len(router_s)} paired spawns; "
        f"medians {ms(median(router_s))} vs minimal {ms(median(minimal_s))})"
    )
    row = Row("4 start-up: spawn → initialize answered", measured, f"≤ {TARGET_RATIO}x", ratio <= TARGET_RATIO)
    return Report([row], [import_note()])


@dataclass
class _Package:
    modules: int = 0
    self_us: int = 0
    imported_by: str | None = None  # "" when the probe itself imported it


def import_note() -> str:
    """The start-up import list, as markdown, for the note under the table."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    probe = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _IMPORT_PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=True,
    )
    added = set(json.loads(probe.stdout.strip().splitlines()[-1]))
    packages, total_us = _group(probe.stderr, added)
    ours = sum(p.self_us for p in packages.values())
    lines = [
        f"**Start-up imports beyond the minimal server** ({len(added)} modules, {ours / 1000:.0f} ms of "
        f"{total_us / 1000:.0f} ms total self import time in one `-X importtime` run; times are indicative):",
        "",
    ]
    for name, package in sorted(packages.items(), key=lambda item: -item[1].self_us):
        lines.append(
            f"- `{name}`: {package.modules} module(s), {package.self_us / 1000:.1f} ms, "
            f"first imported by `{package.imported_by or '(the serve path itself)'}`"
        )
    return "\n".join(lines)


def _group(importtime: str, added: set[str]) -> tuple[dict[str, _Package], int]:
    """Group the ``-X importtime`` lines of the ``added`` modules by top-level package.

    A line reads ``import time: <self µs> | <cumulative µs> | <2 spaces per nesting level><module>``;
    an import prints after everything it imported, so a module's importer is the next line that is
    less deeply nested.
    """
    entries: list[tuple[int, int, str]] = []  # (depth, self µs, module), in output order
    for line in importtime.splitlines():
        fields = line.removeprefix("import time:").split("|", 2)
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header line, or a warning
        name = fields[2][1:]
        entries.append(((len(name) - len(name.lstrip(" "))) // 2, int(fields[0]), name.strip()))
    packages: dict[str, _Package] = defaultdict(_Package)
    for index, (depth, self_us, module) in enumerate(entries):
        if module not in added:
            continue
        top = module.partition(".")[0]
        package = packages[top]
        package.modules += 1
        package.self_us += self_us
        importer = next((name for d, _, name in entries[index + 1 :] if d < depth), "")
        if package.imported_by is None and importer.partition(".")[0] != top:
            package.imported_by = importer
    return dict(packages), sum(self_us for _, self_us, _ in entries)
