"""Arguments that fail an input model, as one :class:`InvalidRequestError` a model can act on:
``<field path>: <problem>`` for each problem, in the path style of the tools' own messages
(``messages[0].content``), without pydantic's input echo, error-type tags or documentation URLs.

pydantic's error locations also name union members (``str``, ``list[tagged-union[...]]``), validator
functions and discriminator tags, none of which the caller wrote. A location is therefore read against
the arguments themselves: a part is kept where it indexes into what was sent (a key of an object, a
position in a list), and the last part is kept when it names what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from colibri_router.errors import InvalidRequestError

MAX_PROBLEMS = 5  # a model fixes the first few; the rest would cost tokens for nothing
_NAMED_BY_LAST_PART = frozenset({"missing", "extra_forbidden"})


def invalid_arguments(
    error: ValidationError, arguments: Any, show_path: Callable[[str], str] = str
) -> InvalidRequestError:
    """One error naming each problem of ``error``, raised validating ``arguments``; ``show_path``
    names a field path as the caller wrote it (the command line: its option)."""
    problems = _problems(error, arguments)
    shown = "; ".join(f"{show_path(path)}: {message}" if path else message for path, message in problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    return InvalidRequestError(shown + (f" (and {more} more)" if more > 0 else ""))


def _problems(error: ValidationError, arguments: Any) -> list[tuple[str, str]]:
    """(path, message) pairs: one per path, the messages of a union's alternatives joined, and a
    union's "not this shape" dropped where a deeper problem shows which shape was meant."""
    by_path: dict[str, list[str]] = {}
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        path = field_path(item["loc"], arguments, named=item["type"] in _NAMED_BY_LAST_PART)
        message = item["msg"].removeprefix("Value error, ")
        messages = by_path.setdefault(path, [])
        if message not in messages:
            messages.append(message)
    paths = list(by_path)
    return [
        (path, " or ".join(messages))
        for path, messages in by_path.items()
        if not any(other != path and _inside(other, path) for other in paths)
    ]


def _inside(other: str, path: str) -> bool:
    return not path or other.startswith(f"{path}.") or other.startswith(f"{path}[")


def field_path(loc: Sequence[int | str], arguments: Any, *, named: bool = False) -> str:
    """``loc`` as the caller's own path (``tools[0].input_schema``): only the parts that index into
    ``arguments``, plus the last part when ``named`` (a missing or unexpected field)."""
    path = ""
    value = arguments
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        sent = (isinstance(part, int) and isinstance(value, list) and 0 <= part < len(value)) or (
            isinstance(part, str) and isinstance(value, dict) and part in value
        )
        if sent:
            value = value[part]
        elif not (last and named):
            continue  # a union member, a validator or a discriminator tag: nothing the caller wrote
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path
