"""An answer's text → a JSON value valid for the caller's schema, or the reasons it is not.

Validation is ours, with ``jsonschema``, against the schema the caller gave, whatever the provider
promised: a strict mode's nulls are first restored to absent keys (:func:`~.transform.restore`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from colibri_router.structured.transform import restore

if TYPE_CHECKING:  # jsonschema loads with the first schema to check, not with the router
    from jsonschema.exceptions import ValidationError

MAX_ERRORS = 5  # named in a repair turn; the first one is the error's message
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.S | re.I)


@dataclass(frozen=True, slots=True)
class Verdict:
    """``errors`` empty: ``value`` is the answer. Otherwise each error is ``<path>: <reason>``, first
    failing path first."""

    value: Any
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def check_schema(schema: Mapping[str, Any]) -> None:
    """Refuse a schema that is not one, before anything is sent (a ValueError: input validation turns it
    into INVALID_REQUEST)."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(dict(schema))
    except SchemaError as error:
        raise ValueError(f"not a valid JSON Schema: {error.message}") from None


def judge(text: str, schema: Mapping[str, Any]) -> Verdict:
    """The answer ``text`` read as JSON, restored and validated against ``schema``."""
    try:
        value = parse_json(text)
    except ValueError as error:
        return Verdict(None, (f"$: the answer is not JSON ({error})",))
    from jsonschema.validators import validator_for

    value = restore(value, schema)
    validator = validator_for(schema)(schema)
    found = sorted(validator.iter_errors(value), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    return Verdict(value, tuple(_describe(error) for error in found[:MAX_ERRORS]))


def parse_json(text: str) -> Any:
    """JSON from a model's answer: as it is, out of a Markdown code fence, or the outermost object."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except ValueError as error:
        start, end = stripped.find("{"), stripped.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(stripped[start : end + 1])
            except ValueError:
                pass
        raise ValueError(error.args[0] if error.args else "unreadable") from None


def path_of(error: ValidationError) -> str:
    path = "$"
    for step in error.absolute_path:
        path += f"[{step}]" if isinstance(step, int) else f".{step}"
    return path


def _describe(error: ValidationError) -> str:
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return f"{path_of(error)}: {message}"
