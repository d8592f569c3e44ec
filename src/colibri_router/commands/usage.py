"""``colibri-router usage [--since 7d] [--by model] [--json]``: what router_call spent, as a table."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from colibri_router.commands.output import emit_error, emit_json
from colibri_router.errors import ColibriError

COLUMNS = ("calls", "errors", "input_tokens", "output_tokens", "cached_tokens", "cost_usd")

PRINTS_JSON = True  # a bad option or value is printed as the INVALID_REQUEST error object (exit 1)


def register(commands: Any, provider_names: list[str]) -> None:
    usage = commands.add_parser("usage", help="totals of calls, tokens and cost")
    usage.add_argument("--since", choices=("today", "7d", "30d", "all"), default="30d")
    usage.add_argument("--by", choices=("provider", "model", "day"))
    usage.add_argument("--json", action="store_true", help="print the JSON totals instead of a table")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    # The service and its models load when the command runs, not with every CLI start (the server's).
    import anyio

    from colibri_router.history.schema import RouterUsageInput
    from colibri_router.history.service import usage

    try:
        result = anyio.run(usage, RouterUsageInput(since=args.since, by=args.by))
    except ColibriError as error:
        return emit_error(stdout, error)
    if args.json:
        emit_json(stdout, result.model_dump(mode="json"))
        return 0
    rows = [[args.by or "", *COLUMNS]]
    for group in [*result.groups, result.total]:
        values = group.model_dump()
        label = group.key if group.key is not None else "total"
        rows.append([label, *(f"${values[c]:.4f}" if c == "cost_usd" else str(values[c]) for c in COLUMNS)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    stdout.write(f"since {result.since}\n")
    for row in rows:
        stdout.write(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
            + "\n"
        )
    return 0
