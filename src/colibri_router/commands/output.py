"""What the commands print: JSON results on stdout, and errors as ``{"error": {...}}`` objects."""

from __future__ import annotations

import json
from typing import Any, TextIO

from colibri_router.errors import ColibriError


def emit_json(stdout: TextIO, value: Any) -> None:
    stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def emit_error(stdout: TextIO, error: ColibriError) -> int:
    from colibri_router.outcomes import error_structured

    emit_json(stdout, error_structured(error))
    return 1


def invalid(stdout: TextIO, message: str) -> int:
    from colibri_router.errors import InvalidRequestError

    return emit_error(stdout, InvalidRequestError(message))
