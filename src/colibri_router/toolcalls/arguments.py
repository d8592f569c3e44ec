"""Tool-call arguments: the JSON text a provider sends → the object a host reads (contract I12).

Parsing never raises. Empty or missing arguments are an empty object; text that is not a JSON
object is kept verbatim under ``_raw`` with the reason under ``_parse_error``, so a truncated call
(cut by ``max_tokens``) still reaches the host intact for diagnosis.
"""

from __future__ import annotations

import json
from typing import Any


def parse_arguments(raw: str | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return {"_parse_error": str(exc), "_raw": raw}
    if not isinstance(value, dict):
        return {"_parse_error": f"arguments are a JSON {type(value).__name__}, not an object", "_raw": raw}
    return value
