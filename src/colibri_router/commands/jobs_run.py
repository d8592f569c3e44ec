"""The work of ``colibri-router jobs`` (:mod:`.jobs`, which imports this when the command runs): list
your jobs, follow or cancel one, or run a detached job (``call --background``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import anyio

from colibri_router.callers import local_caller
from colibri_router.commands.output import emit_error, emit_json
from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.jobs.detached import run_child
from colibri_router.jobs.follow import follow, listing
from colibri_router.jobs.model import Final
from colibri_router.jobs.runner import job_store
from colibri_router.settings import load_settings


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    if args.run_detached:
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
    settings = load_settings()
    principal = local_caller().name
    if args.job_id is None:
        return await listing(job_store(settings), principal, settings)

    async def progress(_done: float, message: str, _total: float | None) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    return await follow(args.job_id, principal, progress, wait_s=args.wait_s, cancel=args.cancel, settings=settings)
