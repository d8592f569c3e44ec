"""The pool keys the replicas of a team server have set aside (docs/keys.md), in ``key_set_asides``:
one row per provider and key fingerprint (never the key), with its reason, until when (seconds since
the epoch; ``'Infinity'`` for a rejected key) and its strikes. A later set-aside of the same key keeps
the later return; rows whose time has passed are deleted by the next write."""

from __future__ import annotations

from colibri_router.store.postgres.connection import Connection

SetAsideRow = tuple[str, str, str, float, int]  # provider, fingerprint, reason, until, strikes


async def current(connection: Connection, now: float) -> list[SetAsideRow]:
    rows = await connection.fetch(
        "SELECT provider, fingerprint, reason, until, strikes FROM key_set_asides WHERE until > $1", now
    )
    return [(r["provider"], r["fingerprint"], r["reason"], r["until"], r["strikes"]) for r in rows]


async def record(connection: Connection, row: SetAsideRow, now: float) -> None:
    async with connection.transaction():
        await connection.execute("DELETE FROM key_set_asides WHERE until <= $1", now)
        await connection.execute(
            """INSERT INTO key_set_asides (provider, fingerprint, reason, until, strikes)
               VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (provider, fingerprint) DO UPDATE
               SET reason = EXCLUDED.reason,
                   until = GREATEST(key_set_asides.until, EXCLUDED.until),
                   strikes = GREATEST(key_set_asides.strikes, EXCLUDED.strikes)""",
            *row,
        )


async def clear(connection: Connection, provider: str, fingerprint: str) -> None:
    await connection.execute(
        "DELETE FROM key_set_asides WHERE provider = $1 AND fingerprint = $2", provider, fingerprint
    )


async def read_only(url: str, now: float, *, timeout_s: float) -> list[SetAsideRow]:
    """The rows, read on a connection of its own that changes nothing (``doctor``: no schema made);
    none when the database cannot be reached or has no such table yet."""
    import asyncpg

    try:
        connection = await asyncpg.connect(url, timeout=timeout_s)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
        return []
    try:
        return await current(connection, now)  # type: ignore[arg-type]  # a plain connection will do
    except asyncpg.PostgresError:  # no table: a database no replica has migrated yet
        return []
    finally:
        await connection.close()
