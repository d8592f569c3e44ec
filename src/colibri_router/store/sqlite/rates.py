"""Per-member rates in SQLite: the check and the new event in one ``BEGIN IMMEDIATE`` transaction
(every process sharing the file admits one use at a time); the rule is :mod:`colibri_router.store.rates`."""

from __future__ import annotations

import sqlite3

from colibri_router.store.rates import WINDOW_S, RateEvent, RateLimits, RateRefusal, admission, fits
from colibri_router.store.sqlite.transactions import write_transaction


def take(
    connection: sqlite3.Connection,
    event_id: str,
    principal: str,
    now_ms: int,
    limits: RateLimits,
    *,
    calls: int,
    tokens: int,
) -> RateRefusal | None:
    """Admit the use (recording its event) or say why not."""
    cutoff = now_ms - round(WINDOW_S * 1000)
    with write_transaction(connection):
        connection.execute("DELETE FROM rate_events WHERE principal = ? AND at_ms <= ?", (principal, cutoff))
        used_calls, used_tokens = connection.execute(
            "SELECT COALESCE(SUM(calls), 0), COALESCE(SUM(tokens), 0) FROM rate_events WHERE principal = ?",
            (principal,),
        ).fetchone()
        refused = None
        if not fits(used_calls, used_tokens, limits, calls=calls, tokens=tokens):
            events = [
                RateEvent(at_ms / 1000, event_calls, event_tokens)
                for at_ms, event_calls, event_tokens in connection.execute(
                    "SELECT at_ms, calls, tokens FROM rate_events WHERE principal = ?", (principal,)
                )
            ]
            refused = admission(events, now_ms / 1000, limits, calls=calls, tokens=tokens)
        if refused is None:
            connection.execute(
                "INSERT INTO rate_events (event_id, principal, at_ms, calls, tokens) VALUES (?, ?, ?, ?, ?)",
                (event_id, principal, now_ms, calls, tokens),
            )
    return refused


def settle(connection: sqlite3.Connection, event_id: str, tokens: int) -> None:
    with write_transaction(connection):
        connection.execute("UPDATE rate_events SET tokens = ? WHERE event_id = ?", (tokens, event_id))
