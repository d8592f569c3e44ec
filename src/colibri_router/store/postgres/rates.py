"""Per-member rates in PostgreSQL, exact across replicas: each use takes an advisory lock on its
member's name for its transaction (``locks.RATE_ADMISSION_CLASS`` and the name's hash), so uses of one
member are admitted one after another whichever replica they reach, and uses of different members
never wait for each other. Time is the database's clock, so replicas' clocks need not agree. The rule
is :mod:`colibri_router.store.rates`."""

from __future__ import annotations

from colibri_router.store.postgres.connection import Connection
from colibri_router.store.rates import WINDOW_S, RateEvent, RateLimits, RateName, RateRefusal, admission, fits


async def take(
    connection: Connection, event_id: str, principal: str, limits: RateLimits, *, calls: int, tokens: int
) -> RateRefusal | None:
    """Admit the use (recording its event) or say why not: one round trip (the schema's
    ``colibri_take_rate``), and for a refusal a second to read the window's events for its wait."""
    [[now, used_calls, used_tokens, admitted]] = await connection.fetch(
        "SELECT * FROM colibri_take_rate($1, $2, $3, $4, $5, $6, $7)",
        event_id,
        principal,
        WINDOW_S,
        limits.rpm,
        limits.tpm,
        calls,
        tokens,
    )
    if admitted:
        return None
    rows = await connection.fetch(
        "SELECT extract(epoch FROM at)::float8, calls, tokens FROM rate_events"
        " WHERE principal = $1 AND at > to_timestamp($2) - make_interval(secs => $3)",
        principal,
        now,
        WINDOW_S,
    )
    refused = admission([RateEvent(*row) for row in rows], now, limits, calls=calls, tokens=tokens)
    if refused is None:  # the same events the function counted, so only a settle since: refuse, and soon free
        limit: RateName = "rpm" if not fits(used_calls, 0, limits, calls=calls, tokens=0) else "tpm"
        allowed = limits.rpm if limit == "rpm" else limits.tpm
        refused = RateRefusal(limit, used_calls if limit == "rpm" else used_tokens, allowed or 0, 0.001)
    return refused


async def settle(connection: Connection, event_id: str, tokens: int) -> None:
    await connection.execute("UPDATE rate_events SET tokens = $2 WHERE event_id = $1", event_id, tokens)
