"""Benchmark 9: does ``serve --http`` hold on to memory call after call?

One ``serve --http`` (SQLite ledger, metrics on) on the lean upstream; a plain httpx client sends
``tools/call`` POSTs, 32 in flight, each SSE answer read and checked. The server's resident set
(``VmRSS`` of ``/proc/<pid>/status``) is read after 1,000 calls and again after 10,000. Target
(issue 22): the second within 10 MB of the first. Run alone: ``uv run python -m benchmarks.memory``.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx

from benchmarks.measure import Report, Row
from benchmarks.over_http import BURST, CONCURRENCY, _burst, _environment, _http_server, _state

FIRST, LAST = 1_000, 10_000
LIMIT_MB = 10.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def run(first: int = FIRST, last: int = LAST) -> Report:
    async with _environment() as (env, directory):
        with _http_server(_state(env, directory, "memory"), directory / "memory.log", workers=1) as url:
            pid = _server_pid(directory / "memory.log")
            limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
            async with httpx.AsyncClient(timeout=120, limits=limits, trust_env=False) as client:
                for _ in range(first // BURST):
                    await _burst(client, url)
                after_first = _rss_mb(pid)
                for _ in range((last - first) // BURST):
                    await _burst(client, url)
                after_last = _rss_mb(pid)
    grown = after_last - after_first
    measured = f"{after_first:.1f} MB after {first:,} calls, {after_last:.1f} MB after {last:,} ({grown:+.1f} MB)"
    return Report([Row("11 serve --http memory: RSS growth", measured, f"≤ {LIMIT_MB:g} MB", grown <= LIMIT_MB)])


def _server_pid(log: Path) -> int:
    """uvicorn's start-up line names the server's process."""
    for line in log.read_text().splitlines():
        if "Started server process [" in line:
            return int(line.split("Started server process [", 1)[1].split("]", 1)[0])
    raise RuntimeError("the server's pid is not in its log")


if __name__ == "__main__":
    from benchmarks.measure import table

    print(table(anyio.run(run).rows))
