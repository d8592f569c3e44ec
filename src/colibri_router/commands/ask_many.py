"""``colibri-router ask-many``: one router_ask_many from the terminal (the MCP tool's own path: one
admission for every model, the ledger and budgets included), printing the JSON result; each model's
end is a line on stderr as it comes."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from colibri_router.commands.call_input import CONVERSATION_OPTIONS, add_conversation_options, validated
from colibri_router.commands.jobs import background
from colibri_router.commands.output import emit_outcome

OPTIONS = ("models", "judge", "judge_instructions", "detail", "max_cost_usd", *CONVERSATION_OPTIONS)

PRINTS_JSON = True  # a bad option or value is printed as the INVALID_REQUEST error object (exit 1)


def register(commands: Any, provider_names: list[str]) -> None:
    ask = commands.add_parser(
        "ask-many",
        help="ask several models at once (router_ask_many) and print its JSON result",
        description="Ask 2-8 models the same prompt in parallel, optionally with a judge's verdict.",
    )
    add_conversation_options(ask)
    ask.add_argument("--model", dest="models", action="append", metavar="MODEL", help="a model to ask (2-8 times)")
    ask.add_argument("--judge", metavar="MODEL", help="a model that compares the answers")
    ask.add_argument("--judge-instructions", help="what the judge should weigh")
    ask.add_argument("--detail", choices=("summary", "full"), help="summary: each answer's first 400 characters")
    ask.add_argument("--timeout", dest="timeout_s", type=float, help="total seconds for every model and the judge")
    ask.add_argument("--max-cost", dest="max_cost_usd", type=float, help="refuse if all could cost more (USD)")
    ask.add_argument("--background", action="store_true", help="run it detached as a job; print its handle")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    # The service and its models load when the command runs, not with every CLI start (the server's).
    from colibri_router.ask_many.schema import RouterAskManyInput
    from colibri_router.ask_many.service import ask_many

    arguments = validated(RouterAskManyInput, args, OPTIONS, stdin, stdout)
    if isinstance(arguments, int):
        return arguments

    if args.background:
        return background("router_ask_many", arguments, stdout)

    async def progress(_done: float, message: str, _total: float | None) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    return emit_outcome(stdout, lambda: ask_many(arguments, notify=progress), exclude_none=True)
