"""WHERE clauses with optional conditions, written out rather than as ``(? IS NULL OR col = ?)``:
SQLite plans a statement before it sees the values, and only a plain ``principal = ?`` lets it
use the per-principal indexes."""

from __future__ import annotations


def where(*conditions: tuple[str, object]) -> tuple[str, tuple[object, ...]]:
    """`` WHERE a AND b`` and its parameters, from ``(condition with one ?, value)`` pairs; pairs
    whose value is None are left out (an empty string when none remain)."""
    kept = [(condition, value) for condition, value in conditions if value is not None]
    if not kept:
        return "", ()
    return " WHERE " + " AND ".join(condition for condition, _ in kept), tuple(value for _, value in kept)
