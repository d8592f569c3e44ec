"""The ``colibri-router`` command: ``serve`` (the default: MCP on stdio) and ``call`` (one
``router_call`` from the terminal, printing the JSON result). Logging is configured before anything
else runs, to stderr, because stdout is the JSON-RPC channel.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO, get_args

from colibri_router import __version__
from colibri_router.errors import ColibriError, ConfigError
from colibri_router.logs import configure_logging, get_logger
from colibri_router.schema import ProviderName
from colibri_router.settings import load_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="colibri-router",
        description="MCP server (stdio) whose tool router_call sends prompts and tool loops to Kimi K2 or Claude.",
    )
    parser.add_argument("--version", action="version", version=f"colibri-router {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="{serve,call}")
    commands.add_parser("serve", help="run the MCP server on stdio (the default)")
    call = commands.add_parser(
        "call", help="run router_call once and print its JSON result", description="Run router_call once."
    )
    call.add_argument("prompt", nargs="?", help="the user prompt; '-' reads it from stdin")
    call.add_argument("--provider", choices=get_args(ProviderName))
    call.add_argument("--model")
    call.add_argument("--system", dest="system_prompt", help="system prompt")
    call.add_argument("--max-tokens", type=int)
    call.add_argument("--temperature", type=float)
    call.add_argument("--timeout", dest="timeout_s", type=float, help="total seconds for the call")
    call.add_argument("--tools", type=Path, help="JSON file: a list of {name, description, input_schema}")
    call.add_argument("--messages", type=Path, help="JSON file: a conversation, instead of a prompt")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _configure_logging_from_settings()
    if args.command == "call":
        return _call(args, sys.stdin, sys.stdout)
    from colibri_router.server import build_server  # the SDK loads only when serving

    build_server().run("stdio")
    return 0


def _configure_logging_from_settings() -> None:
    """Logging first, at the level the settings give; an invalid setting is said at once on stderr
    (every call would fail with CONFIG_ERROR until it is fixed) and logging falls back to info."""
    try:
        level, problem = load_settings().log_level, None
    except ConfigError as error:
        level, problem = "info", error.message
    configure_logging(level)
    if problem is not None:
        get_logger(__name__).warning("invalid settings: calls will fail until this is fixed", problem=problem)


def _call(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    import anyio
    from pydantic import ValidationError

    from colibri_router.router import open_http_client, route
    from colibri_router.schema import RouterCallInput

    fields: dict[str, Any] = {
        key: value
        for key in ("provider", "model", "system_prompt", "max_tokens", "temperature", "timeout_s")
        if (value := getattr(args, key)) is not None
    }
    try:
        if args.messages is not None:
            fields["messages"] = json.loads(args.messages.read_text())
        if args.prompt is not None:
            fields["prompt"] = stdin.read() if args.prompt == "-" else args.prompt
        if args.tools is not None:
            fields["tools"] = json.loads(args.tools.read_text())
        arguments = RouterCallInput.model_validate(fields)
    except (OSError, ValueError, ValidationError) as exc:
        return _emit_error(stdout, "INVALID_REQUEST", str(exc))

    async def run() -> str:
        async with open_http_client() as http:
            return (await route(arguments, client=http)).model_dump_json(indent=2)

    try:
        output = anyio.run(run)
    except ColibriError as error:
        return _emit_error(stdout, error.code, error.message)
    stdout.write(output + "\n")
    return 0


def _emit_error(stdout: TextIO, code: str, message: str) -> int:
    stdout.write(json.dumps({"error": {"code": code, "message": message}}, indent=2) + "\n")
    return 1
