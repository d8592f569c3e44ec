"""Helpers shared by the store tests (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from colibri_router.store import LedgerRow

START = datetime(2025, 3, 14, 12, 0, tzinfo=UTC)


class FakeClock:
    """The current time, as far as the store knows; moves only when the test says so."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def ledger_row(at: datetime, **fields: Any) -> LedgerRow:
    """A successful call's row with small defaults; ``fields`` override them."""
    values: dict[str, Any] = {
        "principal": "alice",
        "thread_id": None,
        "provider": "kimi",
        "model": "kimi-k2",
        "input_tokens": 100,
        "output_tokens": 20,
        "cost_micro_usd": 1_000,
        "latency_ms": 50,
    }
    return LedgerRow(at=at, **(values | fields))
