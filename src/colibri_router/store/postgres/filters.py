"""WHERE clauses with optional conditions, written out rather than as ``($1 IS NULL OR col = $1)``:
a prepared statement may be run with a generic plan, made before the values are known, and such a
plan cannot use the per-principal indexes for a condition that might not apply."""

from __future__ import annotations


def where(*conditions: tuple[str, object]) -> tuple[str, list[object]]:
    """`` WHERE a AND b`` and its parameters, from ``(condition, value)`` pairs where the condition
    writes ``{}`` for the value's placeholder (``$1``, ``$2``... in order); pairs whose value is None
    are left out (an empty string when none remain). Further parameters go after these."""
    kept = [(condition, value) for condition, value in conditions if value is not None]
    if not kept:
        return "", []
    clauses = [condition.format(f"${number}") for number, (condition, _) in enumerate(kept, start=1)]
    return " WHERE " + " AND ".join(clauses), [value for _, value in kept]
