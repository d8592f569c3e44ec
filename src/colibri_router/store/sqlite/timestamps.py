"""Stored times are integer milliseconds since the Unix epoch, UTC: they compare and index as
integers, and SQLite's date functions read them (``at_ms / 1000, 'unixepoch'``)."""

from __future__ import annotations

from datetime import UTC, datetime

from colibri_router.store.utc_windows import as_utc


def to_ms(moment: datetime) -> int:
    return round(as_utc(moment).timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)
