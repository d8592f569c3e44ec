"""Tool-call arguments: what a provider sends → the object a host reads (docs/tools.md).

Parsing never raises. Arguments that say "nothing" are an empty object, silently: a missing field,
JSON ``null`` (Cohere sends the text ``"null"`` for a call without parameters), empty or blank text.
Anything else that is not a JSON object (``[1, 2]``, ``"text"``, ``42``, text that is not JSON) is kept
verbatim under ``_raw`` with the reason under ``_parse_error``, so a truncated call (cut by
``max_tokens``) still reaches the host intact for diagnosis, and the result warns about it
(:func:`unreadable_calls_warning`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from colibri_router.conversation import ToolCall

PARSE_ERROR = "_parse_error"


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Arguments sent as JSON text (most wires, and every stream once its fragments are joined)."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return {PARSE_ERROR: str(exc), "_raw": raw}
    if value is None:
        return {}
    if not isinstance(value, dict):
        return {PARSE_ERROR: f"arguments are a JSON {_json_type(value)}, not an object", "_raw": raw}
    return value


def arguments_object(value: object) -> dict[str, Any]:
    """Arguments as a decoded field: an object (hosts that send one instead of text), JSON text, null
    or missing, or a JSON value of another type."""
    if isinstance(value, dict):
        return dict(value)
    if value is None or isinstance(value, str):
        return parse_arguments(value)
    raw = json.dumps(value, ensure_ascii=False)
    return {PARSE_ERROR: f"arguments are a JSON {_json_type(value)}, not an object", "_raw": raw}


def unreadable_calls_warning(calls: Iterable[ToolCall]) -> str | None:
    """The result's warning naming each call whose arguments could not be read, or None."""
    unreadable = [f"{call.name} ({call.id})" for call in calls if PARSE_ERROR in call.arguments]
    if not unreadable:
        return None
    return (
        f"the arguments of tool call {', '.join(unreadable)} could not be read as a JSON object: "
        f"its input holds {PARSE_ERROR} and _raw instead"
    )


def _json_type(value: object) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)
