"""``colibri-router jobs [ID] [--wait S] [--cancel]``: the jobs in the store, whichever process
started them (an MCP server, ``call --background``): without an id, your recent jobs; with one, its
result once it ends (waiting up to ``--wait`` seconds, progress on stderr), else its handle; with
``--cancel``, the job is cancelled in the process that runs it. Exit 1 when the result is an error.

Its work is in :mod:`.jobs_run`, which loads the job store when the command runs."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from colibri_router.commands.output import emit_error, emit_json
from colibri_router.errors import ColibriError
from colibri_router.settings import load_settings

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
    # The job store and its models load when the command runs, not with every CLI start (the server's).
    from colibri_router.commands.jobs_run import run as run_jobs

    return run_jobs(args, stdin, stdout)


def background(tool: str, arguments: Any, stdout: TextIO) -> int:
    """``--background`` of ``call``, ``ask-many`` and ``run``: start the work detached, print its handle."""
    # The job store loads when a job starts, not with every CLI start (the server's).
    from colibri_router.jobs.detached import start

    try:
        handle = start(tool, arguments, load_settings())
    except ColibriError as error:
        return emit_error(stdout, error)
    emit_json(stdout, handle.model_dump(mode="json"))
    return 0
