"""Per-member rates in PostgreSQL, exact across replicas: each use takes an advisory lock on its
member's name for its transaction (``locks.RATE_ADMISSION`` and the name's hash), so uses of one
member are admitted one after another whichever replica they reach, and uses of different members
never wait for each other. Time is the database's clock, so replicas' clocks need not agree. The rule
is :mod:`colibri_router.store.rates`."""

from __future__ import annotations

from colibri_router.store.postgres import locks
from colibri_router.store.postgres.connection import Connection
from colibri_router.store.rates import WINDOW_S, RateEvent, RateLimits, RateRefusal, admission, fits


async def take(
    connection: Connection, event_id: str, principal: str, limits: RateLimits, *, calls: int, tokens: int
) -> RateRefusal | None:
    """Admit the use (recording its event) or say why not."""
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock($1::int, hashtext($2))", locks.RATE_ADMISSION_CLASS, principal
        )
        # One statement (one round trip): the clock, the window's totals, and the older events gone.
        [[now, used_calls, used_tokens]] = await connection.fetch(
            "WITH now_ AS (SELECT clock_timestamp() AS t),"
            " gone AS (DELETE FROM rate_events WHERE principal = $1"
            " AND at <= (SELECT t FROM now_) - make_interval(secs => $2))"
            " SELECT extract(epoch FROM now_.t)::float8, COALESCE(SUM(e.calls), 0)::bigint,"
            " COALESCE(SUM(e.tokens), 0)::bigint"
            " FROM now_ LEFT JOIN rate_events e ON e.principal = $1 AND e.at > now_.t - make_interval(secs => $2)"
            " GROUP BY now_.t",
            principal,
            WINDOW_S,
        )
        refused = None
        if not fits(used_calls, used_tokens, limits, calls=calls, tokens=tokens):
            rows = await connection.fetch(
                "SELECT extract(epoch FROM at)::float8, calls, tokens FROM rate_events"
                " WHERE principal = $1 AND at > to_timestamp($2) - make_interval(secs => $3)",
                principal,
                now,
                WINDOW_S,
            )
            refused = admission([RateEvent(*row) for row in rows], now, limits, calls=calls, tokens=tokens)
        if refused is None:
            await connection.execute(
                "INSERT INTO rate_events (event_id, principal, at, calls, tokens)"
                " VALUES ($1, $2, to_timestamp($3), $4, $5)",
                event_id,
                principal,
                now,
                calls,
                tokens,
            )
    return refused


async def settle(connection: Connection, event_id: str, tokens: int) -> None:
    await connection.execute("UPDATE rate_events SET tokens = $2 WHERE event_id = $1", event_id, tokens)
