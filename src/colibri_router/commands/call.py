"""``colibri-router call``: one router_call from the terminal (the MCP tool's own path: threads, the
ledger and budgets included), printing the JSON result."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from colibri_router.commands.call_input import CONVERSATION_OPTIONS, add_conversation_options, validated
from colibri_router.commands.jobs import background
from colibri_router.commands.output import emit_outcome

OPTIONS = ("provider", "model", "fallback", "thread_id", "max_cost_usd", *CONVERSATION_OPTIONS)

PRINTS_JSON = True  # a bad option or value is printed as the INVALID_REQUEST error object (exit 1)


def register(commands: Any, provider_names: list[str]) -> None:
    call = commands.add_parser(
        "call", help="run router_call once and print its JSON result", description="Run router_call once."
    )
    add_conversation_options(call)
    call.add_argument("--provider", choices=provider_names)
    call.add_argument("--model", help="a model name, <provider>:<model>, or an alias")
    call.add_argument("--timeout", dest="timeout_s", type=float, help="total seconds for the call")
    call.add_argument("--fallback", action="append", metavar="MODEL", help="a model to fall back to (repeatable)")
    call.add_argument("--thread", dest="thread_id", help='"new", or a thread id to continue')
    call.add_argument("--max-cost", dest="max_cost_usd", type=float, help="refuse calls that could cost more (USD)")
    call.add_argument("--schema", type=Path, help="JSON file: a JSON Schema the answer must match (result: parsed)")
    call.add_argument("--background", action="store_true", help="run it detached as a job; print its handle")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    # The service and its models load when the command runs, not with every CLI start (the server's).
    from colibri_router.call.service import serve
    from colibri_router.schema import RouterCallInput

    arguments = validated(RouterCallInput, args, OPTIONS, stdin, stdout)
    if isinstance(arguments, int):
        return arguments

    if args.background:
        return background("router_call", arguments, stdout)
    return emit_outcome(stdout, lambda: serve(arguments))
