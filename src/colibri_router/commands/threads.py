"""``colibri-router threads [list|show ID|delete ID]``: the stored threads from the terminal."""

from __future__ import annotations

import argparse
from typing import Any, Literal, TextIO

from colibri_router.commands.options import option_path
from colibri_router.commands.output import emit_error, emit_json, invalid
from colibri_router.errors import ColibriError
from colibri_router.errors.invalid import invalid_arguments

ACTIONS: dict[str, Literal["list", "get", "delete"]] = {"list": "list", "show": "get", "delete": "delete"}

PRINTS_JSON = True  # a bad option or value is printed as the INVALID_REQUEST error object (exit 1)


def register(commands: Any, provider_names: list[str]) -> None:
    threads = commands.add_parser("threads", help="list, show or delete stored threads (bare: list)")
    threads.add_argument("action", nargs="?", default="list", choices=tuple(ACTIONS))
    threads.add_argument("thread_id", nargs="?", help="for show and delete")
    threads.add_argument("--limit", type=int, default=20, help="for list: how many (newest first)")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    # The service and its models load when the command runs, not with every CLI start (the server's).
    import anyio
    from pydantic import ValidationError

    from colibri_router.history.schema import RouterThreadsInput
    from colibri_router.history.service import threads
    from colibri_router.store.errors import ThreadNotFound

    if args.action != "list" and args.thread_id is None:
        return invalid(stdout, f"threads {args.action} needs a thread ID (`colibri-router threads list` shows them)")
    fields = {"action": ACTIONS[args.action], "thread_id": args.thread_id, "limit": args.limit}
    try:
        request = RouterThreadsInput.model_validate(fields)
    except ValidationError as exc:
        return emit_error(stdout, invalid_arguments(exc, fields, lambda path: option_path(path, args, fields)))
    try:
        result = anyio.run(threads, request)
        if request.action == "delete" and not result.deleted:
            # The tool answers deleted: false; the command fails as `threads show` does for that ID.
            raise ThreadNotFound(request.thread_id or "")
    except ColibriError as error:
        return emit_error(stdout, error)
    if request.action == "list" and stdout.isatty():
        for thread in result.threads or []:
            stdout.write(
                f"{thread.thread_id}  {thread.updated_at}  {thread.turns:>3} turns  {thread.model:<24}  "
                f"{thread.title}\n"
            )
        return 0
    emit_json(stdout, result.model_dump(mode="json", exclude_none=True))
    return 0
