"""``colibri-router jobs [ID] [--wait S] [--cancel]``: the jobs in the store, whichever process
started them (an MCP server, ``call --background``): without an id, your recent jobs; with one, its
result once it ends (waiting up to ``--wait`` seconds, progress on stderr), else its handle; with
``--cancel``, the job is cancelled in the process that runs it. Exit 1 when the result is an error."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from colibri_router.commands.output import emit_error, emit_json

PRINTS_JSON = True


def register(commands: Any, _provider_names: list[str]) -> None:
    jobs = commands.add_parser(
        "jobs",
        help="list your jobs, or wait for one (--wait S) or cancel it (--cancel)",
        description="Your recent jobs; with an ID, that job's result once it ends, else its progress.",
    )
    jobs.add_argument("job_id", nargs="?", metavar="ID", help="a job's id (job_...)")
    jobs.add_argument("--wait", dest="wait_s", type=float, default=0.0, help="seconds to wait for the job to end")
    jobs.add_argument("--cancel", action="store_true", help="cancel the job")
    # The detached process of `call --background` (see colibri_router.jobs.detached).
    jobs.add_argument("--run-detached", metavar="ID", help=argparse.SUPPRESS)
    jobs.add_argument("--owner-token", help=argparse.SUPPRESS)


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    import anyio

    from colibri_router.errors import ColibriError, InvalidRequestError
    from colibri_router.jobs.model import Final

    if args.run_detached:
        from colibri_router.jobs.detached import run_child

        anyio.run(run_child, args.run_detached, args.owner_token or "", stdin.buffer)
        return 0
    if args.job_id is None and (args.cancel or args.wait_s):
        return emit_error(stdout, InvalidRequestError("--wait and --cancel need a job's ID"))
    if args.wait_s < 0:
        return emit_error(stdout, InvalidRequestError("--wait must be 0 or more seconds"))
    try:
        outcome = anyio.run(_ask, args)
    except ColibriError as error:
        return emit_error(stdout, error)
    if isinstance(outcome, Final):
        emit_json(stdout, outcome.structured)
        return 1 if outcome.is_error else 0
    emit_json(stdout, outcome.model_dump(mode="json"))
    return 0


async def _ask(args: argparse.Namespace) -> Any:
    from colibri_router.callers import local_caller
    from colibri_router.jobs.follow import follow, listing
    from colibri_router.jobs.runner import job_store
    from colibri_router.settings import load_settings

    settings = load_settings()
    principal = local_caller().name
    if args.job_id is None:
        return await listing(job_store(settings), principal, settings)

    async def progress(_done: float, message: str, _total: float | None) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    return await follow(args.job_id, principal, progress, wait_s=args.wait_s, cancel=args.cancel, settings=settings)


def background(tool: str, arguments: Any, stdout: TextIO) -> int:
    """``--background`` of ``call``, ``ask-many`` and ``run``: start the work detached, print its handle."""
    from colibri_router.errors import ColibriError
    from colibri_router.jobs.detached import start
    from colibri_router.settings import load_settings

    try:
        handle = start(tool, arguments, load_settings())
    except ColibriError as error:
        return emit_error(stdout, error)
    emit_json(stdout, handle.model_dump(mode="json"))
    return 0
