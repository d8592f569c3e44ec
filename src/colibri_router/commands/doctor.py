"""``colibri-router doctor [--live] [--http [--host H]] [--json]``: what is wrong, before the first
call. Prints a report on stdout (a line per thing checked, then the problems, each saying what to
do), or the JSON of it with ``--json``; exits 0 when all is well, 1 otherwise. Never prints a key."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from colibri_router.commands.output import emit_json

# main() configures logging for every command; doctor reports broken settings itself.
REPORTS_SETTINGS = True
_MARKS = {"ok": "ok", "problem": "PROBLEM", "off": "-"}


def register(commands: Any, provider_names: list[str]) -> None:
    doctor = commands.add_parser("doctor", help="check the settings, keys, store and team server before a call")
    doctor.add_argument("--live", action="store_true", help="also ask each provider with a key for its model list")
    doctor.add_argument("--http", action="store_true", help="also check the team server's settings (serve --http)")
    doctor.add_argument("--host", default="127.0.0.1", help="with --http: the address serve --http would use")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    import anyio

    # The checks load when the command runs, not with every CLI start (the server's).
    from colibri_router.checkup.report import examine

    report = anyio.run(lambda: examine(live=args.live, http=args.http, host=args.host))
    if args.json:
        emit_json(stdout, report.as_json())
    else:
        _print(report, stdout)
    return 0 if report.ok else 1


def _print(report: Any, stdout: TextIO) -> None:
    write = stdout.write
    write(f"colibri-router {report.version}\n")
    for section in report.sections:
        write(f"{section.name:<12} {_MARKS[section.status]:<8} {section.summary}\n")
        if section.name == "config file":  # the providers it adds come next
            write("providers\n")
            width = max((len(provider.name) for provider in report.providers), default=0)
            for provider in report.providers:
                write(f"  {provider.name:<{width}}  {_MARKS[provider.status]:<8} {provider.summary}\n")
    problems = report.problems
    if not problems:
        write("all is well\n")
        return
    write(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}:\n")
    for problem in problems:
        write(f"  - {problem}\n")
