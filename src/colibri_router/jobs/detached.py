"""``call --background`` (and ``ask-many``, ``run``): the work in a detached process of its own.

The command writes the job's row, starts ``colibri-router jobs --run-detached`` in a new session
(Ctrl-C in the terminal does not reach it), hands it the tool and its arguments on stdin, prints the
handle and exits. The child owns the row under its own pid (``host:pid:token``, the token chosen by
the parent), runs the tool's own service (so the ledger and budgets count it as a direct call) and
stores the result exactly as the MCP tool would answer it, so ``router_job`` on any server sharing the
store, and ``colibri-router jobs``, read it. The child reads its stdin to its end before it starts, and
the parent closes it only once the row is written: the child never runs a job with no row.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import subprocess
import sys
from datetime import UTC, datetime
from typing import IO, Any

from pydantic import BaseModel

from colibri_router.callers import ToolCall, local_caller
from colibri_router.errors import ColibriError
from colibri_router.jobs.model import Final, JobHandle
from colibri_router.jobs.runner import RUNNER, error_final, job_store
from colibri_router.outcomes import internal_error
from colibri_router.settings import Settings, load_settings
from colibri_router.store import JobRecord
from colibri_router.store.jobs import new_job_id


def start(tool: str, arguments: BaseModel, settings: Settings) -> JobHandle:
    """Start ``tool`` with ``arguments`` in a detached process; its handle."""
    job_id, token = new_job_id(), secrets.token_hex(4)
    child = subprocess.Popen(
        [sys.executable, "-m", "colibri_router", "jobs", "--run-detached", job_id, "--owner-token", token],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert child.stdin is not None
    try:
        now = datetime.now(UTC)
        record = JobRecord(
            job_id=job_id,
            principal=local_caller().name,
            tool=tool,
            status="running",
            progress=None,
            cost_micro_usd=0,
            started_at=now,
            updated_at=now,
            owner=f"{socket.gethostname()}:{child.pid}:{token}",
        )
        import anyio

        anyio.run(job_store(settings).create_job, record, settings.job_ttl_s)
        payload = {"tool": tool, "arguments": arguments.model_dump(mode="json", exclude_unset=True)}
        child.stdin.write(json.dumps(payload).encode())
    except BaseException:
        child.kill()  # no row, no job
        raise
    finally:
        _close(child.stdin)
    return JobHandle.of(job_id, "running")


def _close(stream: IO[bytes]) -> None:
    with contextlib.suppress(OSError):  # the child died already: its job reads as stopped
        stream.close()


async def run_child(job_id: str, token: str, stdin: IO[bytes]) -> None:
    """The detached process: its job's tool and arguments from ``stdin``, run to their end."""
    # The table names each tool's service and models; here, not at the top: it loads the SDK's types,
    # which the parent (`call --background`, :func:`start`) never needs.
    from colibri_router.server.table import BY_NAME, load

    payload: dict[str, Any] = json.loads(stdin.read() or b"{}")
    settings = load_settings()
    record = await job_store(settings).load_job(job_id, local_caller().name, settings.job_ttl_s)
    if record is None or not record.owner.endswith(f":{token}"):
        return  # the parent failed before it wrote the row
    entry = BY_NAME[payload["tool"]]

    async def work(notify: Any) -> Final:
        try:
            arguments = load(entry.arguments).model_validate(payload["arguments"])
            result = await load(entry.service)(arguments, ToolCall(local_caller(), notify, True))
        except ColibriError as error:
            return error_final(error)
        except Exception:
            return error_final(internal_error())
        structured = result if isinstance(result, dict) else result.model_dump(mode="json", exclude_none=entry.sparse)
        return Final(structured, json.dumps(structured, ensure_ascii=False, separators=(",", ":")), is_error=False)

    await RUNNER.run_recorded(record, work, settings)
