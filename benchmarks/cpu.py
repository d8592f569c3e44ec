"""CPU time of a server from outside: one process's, or its whole process tree's (``/proc``).

Benchmarks 9 and 12 charge a server the user and system CPU seconds its processes spent over a
measuring window. A server that forks (uvicorn's supervisor and its workers, a proxy's helpers) is
charged for every process below the one the benchmark spawned.
"""

from __future__ import annotations

import os
from pathlib import Path


def cpu_s(pid: int) -> float:
    """The process's user and system CPU seconds so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    # Looked up here, not at import: the module is imported (never run) by tests on every platform,
    # and Windows has no sysconf.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError):
                continue  # gone meanwhile
            children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(current, []))
    return found


def tree_cpu_s(pids: list[int]) -> float:
    """The CPU seconds so far of those of ``pids`` still running."""
    total = 0.0
    for pid in pids:
        try:
            total += cpu_s(pid)
        except OSError:
            continue
    return total
