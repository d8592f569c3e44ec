"""``colibri-router call``: one router_call from the terminal (the MCP tool's own path: threads, the
ledger and budgets included), printing the JSON result."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from colibri_router.commands.output import emit_error, invalid
from colibri_router.errors import ColibriError

OPTIONS = ("provider", "model", "system_prompt", "max_tokens", "temperature", "timeout_s", "reasoning")


def register(commands: Any, provider_names: list[str]) -> None:
    call = commands.add_parser(
        "call", help="run router_call once and print its JSON result", description="Run router_call once."
    )
    call.add_argument("prompt", nargs="?", help="the user prompt; '-' reads it from stdin")
    call.add_argument("--provider", choices=provider_names)
    call.add_argument("--model", help="a model name, <provider>:<model>, or an alias")
    call.add_argument("--system", dest="system_prompt", help="system prompt")
    call.add_argument("--max-tokens", type=int)
    call.add_argument("--temperature", type=float)
    call.add_argument("--reasoning", choices=("off", "low", "medium", "high"))
    call.add_argument("--timeout", dest="timeout_s", type=float, help="total seconds for the call")
    call.add_argument("--fallback", action="append", metavar="MODEL", help="a model to fall back to (repeatable)")
    call.add_argument("--thread", dest="thread_id", help='"new", or a thread id to continue')
    call.add_argument("--max-cost", dest="max_cost_usd", type=float, help="refuse calls that could cost more (USD)")
    call.add_argument("--tools", type=Path, help="JSON file: a list of {name, description, input_schema}")
    call.add_argument("--messages", type=Path, help="JSON file: a conversation, instead of a prompt")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    import anyio
    from pydantic import ValidationError

    from colibri_router.calls import serve
    from colibri_router.schema import RouterCallInput

    fields: dict[str, Any] = {key: value for key in OPTIONS if (value := getattr(args, key)) is not None}
    for key in ("fallback", "thread_id", "max_cost_usd"):
        if (value := getattr(args, key)) is not None:
            fields[key] = value
    try:
        if args.messages is not None:
            fields["messages"] = json.loads(args.messages.read_text())
        if args.prompt is not None:
            fields["prompt"] = stdin.read() if args.prompt == "-" else args.prompt
        if args.tools is not None:
            fields["tools"] = json.loads(args.tools.read_text())
        arguments = RouterCallInput.model_validate(fields)
    except ValidationError as exc:
        from colibri_router.invalid import invalid_arguments

        return emit_error(stdout, invalid_arguments(exc, fields))  # as the tool says it
    except (OSError, ValueError) as exc:
        return invalid(stdout, str(exc))

    async def call() -> str:
        return (await serve(arguments)).model_dump_json(indent=2)

    try:
        output = anyio.run(call)
    except ColibriError as error:
        return emit_error(stdout, error)
    stdout.write(output + "\n")
    return 0
