"""How a command's errors name what the user typed: a field of the tool's input as the option that
gave it (``max_tokens`` → ``--max-tokens 0``), and the JSON files of ``--tools`` and ``--messages``
read with errors that name the option and the file."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from pathlib import Path
from typing import Any

from colibri_router.errors import InvalidRequestError

# Fields read from a JSON file: their paths stay the file's own (messages[0].content).
FILE_FIELDS = frozenset({"messages", "tools"})
_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?")


def read_json_file(option: str, path: Path) -> Any:
    """The JSON value in ``path``, given as ``option``; INVALID_REQUEST naming both when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidRequestError(f"{option} {path}: cannot read the file: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise InvalidRequestError(f"{option} {path}: the file is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidRequestError(
            f"{option} {path}: the file is not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None


def option_path(path: str, args: argparse.Namespace, fields: dict[str, Any]) -> str:
    """``path`` (a field path of the tool's input) as the command line gave it: ``--temperature 5``,
    ``--fallback ''`` for ``fallback[0]``, ``--tools tools.json: tools[0].name`` for a file's field.
    A path no option gave (``prompt``) stays as it is."""
    head = _HEAD.match(path)
    options: dict[str, str] = getattr(args, "option_names", {})
    if head is None or head.group(1) not in options:
        return path
    field, index = head.group(1), head.group(2)
    option, value, rest = options[field], fields.get(field), path[head.end() :]
    if field in FILE_FIELDS:
        return f"{option} {getattr(args, field)}: {path}"
    if index is not None and isinstance(value, list) and int(index) < len(value):
        return f"{option} {shlex.quote(str(value[int(index)]))}{rest}"
    if index is None and value is not None and not isinstance(value, list):
        return f"{option} {shlex.quote(f'{value:g}' if isinstance(value, float) else str(value))}{rest}"
    return f"{option}{path[len(field) :]}"
