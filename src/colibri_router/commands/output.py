"""What the commands print: JSON results on stdout, and errors as ``{"error": {...}}`` objects."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TextIO

from colibri_router.errors import ColibriError, InvalidRequestError

if TYPE_CHECKING:  # the commands are imported at start-up; pydantic with their first run
    from pydantic import BaseModel


def emit_json(stdout: TextIO, value: Any) -> None:
    stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def emit_error(stdout: TextIO, error: ColibriError) -> int:
    # The error objects (and with them the result models) load only when a command fails.
    from colibri_router.outcomes import error_structured

    emit_json(stdout, error_structured(error))
    return 1


def invalid(stdout: TextIO, message: str) -> int:

    return emit_error(stdout, InvalidRequestError(message))


def emit_outcome(stdout: TextIO, work: Callable[[], Awaitable[BaseModel]], *, exclude_none: bool = False) -> int:
    """Run ``work`` (one service call) on a new event loop and print its result as JSON, or the
    error it raised; the exit status."""
    import anyio

    try:
        result = anyio.run(work)
    except ColibriError as error:
        return emit_error(stdout, error)
    emit_json(stdout, result.model_dump(mode="json", exclude_none=exclude_none))
    return 0
