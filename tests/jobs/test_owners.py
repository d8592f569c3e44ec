"""Which process runs a job, and when it is gone (colibri_router.jobs.owners)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from colibri_router.jobs import owners

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_this_process_is_gone_only_when_it_does_not_run_the_job() -> None:
    me = owners.this_process()
    assert me == owners.this_process()
    assert me.startswith(f"{socket.gethostname()}:{os.getpid()}:")
    assert not owners.gone(me, NOW, NOW, running_here=True)
    assert owners.gone(me, NOW, NOW, running_here=False)  # a restarted server with the same pid


def test_a_process_of_this_host_that_ended_is_gone_at_once() -> None:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True, text=True
    )
    ended = f"{socket.gethostname()}:{int(child.stdout)}:0000"
    alive = f"{socket.gethostname()}:{os.getppid()}:0000"

    assert owners.gone(ended, NOW, NOW, running_here=False)
    assert not owners.gone(alive, NOW, NOW, running_here=False)


@given(silent_s=st.floats(0, 3 * owners.LEASE_S), pid=st.integers(1, 2**22))
def test_another_hosts_process_is_gone_once_its_row_is_not_renewed_for_the_lease(silent_s: float, pid: int) -> None:
    owner = f"another-host.example:{pid}:beef"
    renewed = NOW - timedelta(seconds=silent_s)

    assert owners.gone(owner, renewed, NOW, running_here=False) == (silent_s > owners.LEASE_S)
