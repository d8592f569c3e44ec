"""Which process runs a job, and whether it is gone.

A job's row names its owner: ``host:pid:token`` (the token is random per process, so a restarted
server that got the same pid, as a container's pid 1 does, is still another owner). The owner
renews the row at least every :data:`HEARTBEAT_S`; a running job is read as stopped when its owner
is this very process but does not run it, when its owner is a process of this host that no longer
exists, or when its row was not renewed for :data:`LEASE_S` (another host's process that died).
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
from datetime import datetime, timedelta

HEARTBEAT_S = 5.0
LEASE_S = 30.0


@functools.cache
def _token_for(pid: int) -> str:
    """One random token per process (per pid: a forked child gets its own)."""
    return secrets.token_hex(4)


def this_process() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_token_for(pid)}"


def gone(owner: str, renewed_at: datetime, now: datetime, *, running_here: bool) -> bool:
    """Whether the process that ``owner`` names no longer runs the job (see the module docstring)."""
    if owner == this_process():
        return not running_here
    if now - renewed_at > timedelta(seconds=LEASE_S):
        return True
    parts = owner.split(":")
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False  # another host's process: only its lease tells
    return not _alive(int(parts[1]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    try:  # a zombie (ended, not yet reaped by its parent) answers signal 0 but runs nothing
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True
