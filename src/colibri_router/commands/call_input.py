"""What ``call`` and ``ask-many`` share: the options of a conversation (prompt, system prompt, limits,
tools, messages, files) and how they become the tool's validated input, refused as the tool refuses
it (``INVALID_REQUEST: <field path>: <problem>``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from colibri_router.commands.options import option_path, read_json_file
from colibri_router.commands.output import emit_error
from colibri_router.errors import InvalidRequestError
from colibri_router.errors.invalid import invalid_arguments

if TYPE_CHECKING:  # the commands are imported at start-up; their models with their first call
    from pydantic import BaseModel

# The options named like the tool's fields, copied when given.
CONVERSATION_OPTIONS = ("system_prompt", "max_tokens", "temperature", "timeout_s", "reasoning", "files")
Input = TypeVar("Input", bound="BaseModel")


def add_conversation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", nargs="?", help="the user prompt; '-' reads it from stdin")
    parser.add_argument("--system", dest="system_prompt", help="system prompt")
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--reasoning", choices=("off", "low", "medium", "high"))
    parser.add_argument(
        "--file", dest="files", action="append", metavar="PATH", help="a file, glob or directory to send (repeatable)"
    )
    parser.add_argument("--tools", type=Path, help="JSON file: a list of {name, description, input_schema}")
    parser.add_argument("--messages", type=Path, help="JSON file: a conversation, instead of a prompt")


def validated(
    model: type[Input], args: argparse.Namespace, options: tuple[str, ...], stdin: TextIO, stdout: TextIO
) -> Input | int:
    """The tool's input from the command line, or the exit status of the error printed instead."""
    # Loaded when the command runs, not with every CLI start (the server's).
    from pydantic import ValidationError

    fields: dict[str, Any] = {key: value for key in options if (value := getattr(args, key)) is not None}
    try:
        if args.messages is not None:
            fields["messages"] = read_json_file("--messages", args.messages)
        if args.prompt is not None:
            fields["prompt"] = stdin.read() if args.prompt == "-" else args.prompt
        if args.tools is not None:
            fields["tools"] = read_json_file("--tools", args.tools)
        if getattr(args, "schema", None) is not None:  # the commands that take --schema
            fields["response_schema"] = read_json_file("--schema", args.schema)
        return model.model_validate(fields)
    except ValidationError as exc:
        return emit_error(stdout, invalid_arguments(exc, fields, lambda path: option_path(path, args, fields)))
    except InvalidRequestError as error:
        return emit_error(stdout, error)
