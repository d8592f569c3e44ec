"""The ``colibri-router`` command: ``serve`` (the default: MCP on stdio; ``serve --http`` for a
team), and the subcommands of :mod:`colibri_router.commands` (``call``, ``ask-many``, ``models``,
``threads``, ``usage``, ``run``, ``jobs``, ``token``, ``doctor``). Logging is configured before anything
else runs, to stderr, because stdout is the JSON-RPC channel.

Serving says hello on stderr (a line for a person on a terminal, a log line for a host) and ends at
once on the first Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from colibri_router import __version__
from colibri_router.commands import ask_many, call, doctor, jobs, models, run, threads, token, usage
from colibri_router.commands.output import invalid
from colibri_router.errors import ConfigError
from colibri_router.logs import configure_logging, get_logger
from colibri_router.observability import install_traces_if_configured
from colibri_router.providers import configured, load_registry, provider_names, usable_providers
from colibri_router.settings import load_settings

HTTP_FLAGS = ("host", "port", "path", "workers")
COMMANDS = {
    "call": call,
    "ask-many": ask_many,
    "models": models,
    "threads": threads,
    "usage": usage,
    "run": run,
    "jobs": jobs,
    "token": token,
    "doctor": doctor,
}


class UsageError(Exception):
    """A bad option or value on the command line of a command that prints JSON."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CommandParser(argparse.ArgumentParser):
    """argparse's parser, except in a command that prints JSON (``json_errors``): there a bad option
    or value is raised as :class:`UsageError`, which :func:`main` prints as the documented
    ``{"error": ...}`` (INVALID_REQUEST, exit 1) instead of a usage message with exit 2. ``--help``
    and every other command keep argparse's behaviour."""

    json_errors = False
    subparsers: argparse._SubParsersAction[CommandParser]  # the top-level parser's commands

    def error(self, message: str) -> NoReturn:
        if self.json_errors:
            # argparse says "argument --provider: invalid choice: 'nope' (choose from ...)".
            raise UsageError(message.removeprefix("argument "))
        super().error(message)


def build_parser() -> CommandParser:
    parser = CommandParser(
        prog="colibri-router",
        description="MCP server (stdio) whose tool router_call sends prompts and tool loops to other models.",
    )
    parser.add_argument("--version", action="version", version=f"colibri-router {__version__}")
    commands = parser.add_subparsers(
        dest="command",
        metavar="{serve,call,ask-many,models,threads,usage,run,jobs,token,doctor}",
        parser_class=CommandParser,
    )
    parser.subparsers = commands
    serve = commands.add_parser("serve", help="run the MCP server on stdio (the default), or --http")
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    # No defaults here: an option given without --http is an error; HttpOptions holds the defaults.
    serve.add_argument("--host", help="with --http: the address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, help="with --http: the port (8000)")
    serve.add_argument("--path", help="with --http: the MCP endpoint's path (/mcp)")
    serve.add_argument("--workers", type=int, help="with --http: uvicorn worker processes (1)")
    serve.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="with --http: serve a non-loopback address without COLIBRI_HTTP_TOKENS_FILE",
    )
    names = provider_names()
    for name, command in COMMANDS.items():
        command.register(commands, names)
        commands.choices[name].json_errors = getattr(command, "PRINTS_JSON", False)
    return parser


def _parse(parser: CommandParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, or :class:`UsageError` for a JSON command; argparse's usage and exit 2 otherwise."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        command_parser = parser if args.command is None else parser.subparsers.choices[args.command]
        command_parser.error(f"unrecognized arguments: {' '.join(extra)} (see {command_parser.prog} --help)")
    sub = parser.subparsers.choices.get(args.command or "")
    # How each field was given on the command line, for messages that name the option (--max-tokens).
    args.option_names = {
        action.dest: action.option_strings[-1] for action in (sub._actions if sub else []) if action.option_strings
    }
    return args


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = _parse(parser, argv)
    except UsageError as error:
        return invalid(sys.stdout, error.message)
    command = COMMANDS.get(args.command or "serve")
    if command is not None:
        if getattr(command, "REPORTS_SETTINGS", False):
            configure_logging("warning")  # it names every broken setting itself, on stdout
        else:
            _configure_logging_from_settings()
        status: int = command.run(args, sys.stdin, sys.stdout)
        return status
    if getattr(args, "http", False):
        return _serve_http(args)
    if args.command == "serve" and (args.insecure_no_auth or any(getattr(args, f) is not None for f in HTTP_FLAGS)):
        sys.stderr.write("colibri-router serve: --host, --port, --path, --workers and --insecure-no-auth need --http\n")
        return 2
    _end_at_once_on_interrupt()  # first: the SDK's import alone takes a while
    _configure_logging_from_settings()
    from colibri_router.server import build_server  # the SDK loads only when serving

    install_traces_if_configured()
    server = build_server()
    say_hello(sys.stderr)
    server.run("stdio")
    return 0


def _serve_http(args: argparse.Namespace) -> int:
    """``serve --http``: uvicorn ends on Ctrl-C or SIGTERM by itself, letting calls in flight finish."""
    _configure_logging_from_settings()
    # serve --http only: uvicorn and Starlette load when a team server starts.
    from colibri_router.server.http import HttpOptions, plan, serve_http

    given = {flag: getattr(args, flag) for flag in HTTP_FLAGS if getattr(args, flag) is not None}
    options = HttpOptions(**given, insecure_no_auth=args.insecure_no_auth)
    if options.workers < 1 or not 0 <= options.port <= 65535:
        sys.stderr.write("colibri-router serve: --workers must be at least 1 and --port within 0-65535\n")
        return 2
    try:
        decided = plan(options, load_settings())
        auth = "bearer tokens required" if decided.tokens else "no authentication"
        say_hello(
            sys.stderr,
            f"MCP over HTTP at {options.url} ({auth}; Ctrl-C to quit)",
            f"serving MCP over HTTP at {options.url}",
        )
        serve_http(options, decided)
    except ConfigError as error:
        sys.stderr.write(f"colibri-router serve: {error.message}\n")
        return 2
    return 0


def _end_at_once_on_interrupt() -> None:
    """The first SIGINT (Ctrl-C) ends the process at once, without a traceback.

    Left to asyncio, SIGINT cancels the server's main task, which then waits for the SDK's stdin
    reader: a worker thread blocked in a read that no cancellation reaches (python-sdk issue 3551),
    so the server never ends on a pipe or a terminal. Nothing in flight needs saving (an interrupted
    call is lost either way, and every log line is flushed as it is written), so the process ends
    itself by the same signal, in its default action: the parent (a shell, a host) sees it
    interrupted, as it sees SIGTERM, which already ends the process that way.
    """

    def end(signum: int, _frame: object) -> None:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    # Installed before the event loop starts, so asyncio keeps it instead of installing its own.
    signal.signal(signal.SIGINT, end)


HELLO = "MCP on stdio, waiting for a host (Ctrl-D or Ctrl-C to quit)"
HELLO_EVENT = "serving MCP on stdio, waiting for a host"


def say_hello(stderr: TextIO, hello: str = HELLO, event: str = HELLO_EVENT) -> None:
    """Start-up facts for whoever watches stderr: on a terminal one line for a person (``hello``),
    else (a host's log) one structured info line (``event``). Never on stdout, the JSON-RPC channel."""
    keys = provider_keys()
    with_key = [name for name, _, has_key in keys if has_key]
    broken = _broken_setting()
    if not stderr.isatty():
        extra = {"broken_setting": broken, "check_with": DOCTOR} if broken else {}
        get_logger(__name__).info(
            event,
            version=__version__,
            providers_with_key=with_key,
            providers_without_key=[name for name, _, has_key in keys if not has_key],
            **extra,
        )
        return
    if with_key:
        summary = f"providers with a key: {', '.join(with_key)}"
    else:
        summary = "no provider has a key yet" + (f" (set e.g. {keys[0][1]})" if keys else "")
    if broken:
        summary += f"; a setting is broken ({broken}): run `{DOCTOR}`"
    stderr.write(f"colibri-router {__version__}: {hello}; {summary}\n")
    stderr.flush()


DOCTOR = "colibri-router doctor"


def _broken_setting() -> str | None:
    """What is broken among the settings, the env file and the config file (every call would fail
    with it), or None."""
    try:
        load_settings()
        load_registry()
    except ConfigError as error:
        return error.message
    return None


def provider_keys() -> list[tuple[str, str, bool]]:
    """Each provider's name, its key variable, and whether a key is set for it now.

    The one place the command reads the provider list, so that it follows wherever the registry
    lives. A setting that does not parse counts as no key (start-up already warned about it)."""

    return [(spec.name, " or ".join(spec.key_envs), configured(spec)) for spec in usable_providers().values()]


def _configure_logging_from_settings() -> None:
    """Logging first, at the level the settings give; an invalid setting is said at once on stderr
    (every call would fail with CONFIG_ERROR until it is fixed) and logging falls back to info."""
    try:
        level, problem = load_settings().log_level, None
    except ConfigError as error:
        level, problem = "info", error.message
    configure_logging(level)
    if problem is not None:
        get_logger(__name__).warning(
            "invalid settings: calls will fail until this is fixed", problem=problem, check_with=DOCTOR
        )
    try:
        load_registry()  # the config file: a broken one fails every call, so say it now
    except ConfigError as error:
        get_logger(__name__).warning(
            "invalid config file: calls will fail until this is fixed", problem=error.message, check_with=DOCTOR
        )
