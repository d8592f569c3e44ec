"""Thread SQL: each function is one unit of work on a pooled connection.

A thread is *live* while ``updated_at > expiry_cutoff`` (created or appended to within the TTL, by
the store's clock); anything else reads as unknown, and is deleted when the store next purges. A
thread's lease (``lease_token``, ``lease_expires_at``) is held while the token is set and has not
expired. An append locks the thread's row from its lease check to its commit (``FOR UPDATE``), so
two processes appending to one thread take turns, each numbering its messages after the other's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from colibri_router.store.errors import ThreadBusy, ThreadNotFound
from colibri_router.store.media import deflate, inflate, referenced
from colibri_router.store.postgres.connection import Connection
from colibri_router.store.postgres.filters import where
from colibri_router.store.records import StoredThread, ThreadSummary

# In ThreadSummary's field order.
_SUMMARY_COLUMNS = "thread_id, principal, title, provider, model, turns, created_at, updated_at"


async def purge_expired(connection: Connection, expiry_cutoff: datetime) -> None:
    """Delete threads past their TTL (their messages go with them, by cascade). Rows another
    transaction holds are skipped: another process is purging them already, or is appending to a
    thread its own clock still finds live; waiting for either could only end in a deadlock."""
    await connection.execute(
        "DELETE FROM threads WHERE thread_id IN"
        " (SELECT thread_id FROM threads WHERE updated_at <= $1 FOR UPDATE SKIP LOCKED)",
        expiry_cutoff,
    )


async def create(
    connection: Connection,
    *,
    thread_id: str,
    principal: str,
    provider: str,
    model: str,
    now: datetime,
    expiry_cutoff: datetime,
) -> None:
    await purge_expired(connection, expiry_cutoff)
    await connection.execute(
        "INSERT INTO threads (thread_id, principal, provider, model, created_at, updated_at)"
        " VALUES ($1, $2, $3, $4, $5, $5)",
        thread_id,
        principal,
        provider,
        model,
        now,
    )


async def load(connection: Connection, thread_id: str, principal: str | None, expiry_cutoff: datetime) -> StoredThread:
    """The thread and its messages, read in one statement (so from one snapshot: never a thread
    with half of an append)."""
    clause, parameters = where(("thread_id = {}", thread_id), ("principal = {}", principal))
    row = await connection.fetchrow(
        "SELECT principal, provider, model, title, created_at, updated_at,"
        f" CASE WHEN updated_at > ${len(parameters) + 1} THEN ARRAY("
        "  SELECT message::text FROM thread_messages WHERE thread_messages.thread_id = threads.thread_id"
        "  ORDER BY position"
        f") END AS messages FROM threads{clause}",
        *parameters,
        expiry_cutoff,
    )
    if row is not None and row["messages"] is not None:
        messages = [json.loads(text) for text in row["messages"]]
        if referenced(messages):
            blobs = await connection.fetch("SELECT sha256, data FROM thread_media WHERE thread_id = $1", thread_id)
            messages = inflate(messages, {blob["sha256"]: blob["data"] for blob in blobs})
        return StoredThread(
            thread_id,
            row["principal"],
            row["provider"],
            row["model"],
            row["title"],
            messages,
            row["created_at"],
            row["updated_at"],
        )
    if row is not None:  # expired: gone now rather than at the next purge
        await connection.execute(
            "DELETE FROM threads WHERE thread_id = $1 AND updated_at <= $2", thread_id, expiry_cutoff
        )
    raise ThreadNotFound(thread_id)


async def append(
    connection: Connection,
    *,
    thread_id: str,
    principal: str,
    messages: Sequence[Mapping[str, Any]],
    title: str,
    provider: str,
    model: str,
    lease_token: str | None,
    now: datetime,
    expiry_cutoff: datetime,
) -> None:
    """Append ``messages`` after the stored ones. ``title`` (the new messages' title) is kept only
    if the thread has none yet. Refused while another call's lease holds the thread."""
    stored, blobs = deflate(messages)
    encoded = [json.dumps(message, ensure_ascii=False, separators=(",", ":")) for message in stored]
    async with connection.transaction():
        row = await connection.fetchrow(
            "SELECT turns, lease_token, lease_expires_at FROM threads"
            " WHERE thread_id = $1 AND principal = $2 AND updated_at > $3 FOR UPDATE",
            thread_id,
            principal,
            expiry_cutoff,
        )
        if row is None:
            raise ThreadNotFound(thread_id)
        holder = row["lease_token"]
        if holder is not None and holder != lease_token and row["lease_expires_at"] > now:
            raise ThreadBusy(thread_id, None)
        await connection.execute(
            "INSERT INTO thread_messages (thread_id, position, message)"
            " SELECT $1, $2 + number - 1, message::json FROM unnest($3::text[]) WITH ORDINALITY AS m (message, number)",
            thread_id,
            row["turns"],
            encoded,
        )
        if blobs:
            await connection.execute(
                "INSERT INTO thread_media (thread_id, sha256, data) SELECT $1, sha256, data"
                " FROM unnest($2::text[], $3::text[]) AS m (sha256, data) ON CONFLICT DO NOTHING",
                thread_id,
                list(blobs),
                list(blobs.values()),
            )
        await connection.execute(
            "UPDATE threads SET turns = turns + $2, provider = $3, model = $4, updated_at = $5,"
            " title = CASE WHEN title = '' THEN $6 ELSE title END WHERE thread_id = $1",
            thread_id,
            len(encoded),
            provider,
            model,
            now,
            title,
        )


async def summaries(
    connection: Connection, principal: str | None, limit: int, expiry_cutoff: datetime
) -> list[ThreadSummary]:
    await purge_expired(connection, expiry_cutoff)
    # The cutoff is checked again: the purge skipped any expired row another transaction held.
    clause, parameters = where(("principal = {}", principal), ("updated_at > {}", expiry_cutoff))
    rows = await connection.fetch(
        f"SELECT {_SUMMARY_COLUMNS} FROM threads{clause}"
        f" ORDER BY updated_at DESC, created_order DESC LIMIT ${len(parameters) + 1}",
        *parameters,
        limit,
    )
    return [ThreadSummary(*row) for row in rows]


async def delete(connection: Connection, thread_id: str, principal: str | None, expiry_cutoff: datetime) -> bool:
    await purge_expired(connection, expiry_cutoff)
    clause, parameters = where(
        ("thread_id = {}", thread_id), ("principal = {}", principal), ("updated_at > {}", expiry_cutoff)
    )
    return await connection.fetchval(f"DELETE FROM threads{clause} RETURNING true", *parameters) is not None


async def take_lease(
    connection: Connection,
    *,
    thread_id: str,
    principal: str,
    token: str,
    now: datetime,
    expires_at: datetime,
    expiry_cutoff: datetime,
) -> bool:
    """Take the lease if nobody holds it (or the holder's lease lapsed), in one atomic UPDATE.
    False when another call holds it; :class:`ThreadNotFound` when there is no such live thread."""
    taken = await connection.fetchval(
        "UPDATE threads SET lease_token = $3, lease_expires_at = $4"
        " WHERE thread_id = $1 AND principal = $2 AND updated_at > $5"
        " AND (lease_token IS NULL OR lease_expires_at <= $6) RETURNING true",
        thread_id,
        principal,
        token,
        expires_at,
        expiry_cutoff,
        now,
    )
    if taken:
        return True
    exists = await connection.fetchval(
        "SELECT EXISTS (SELECT FROM threads WHERE thread_id = $1 AND principal = $2 AND updated_at > $3)",
        thread_id,
        principal,
        expiry_cutoff,
    )
    if not exists:
        raise ThreadNotFound(thread_id)
    return False


async def renew_lease(connection: Connection, thread_id: str, token: str, expires_at: datetime) -> bool:
    """Extend our lease; False if it is no longer ours (it lapsed and another call took it)."""
    renewed = await connection.fetchval(
        "UPDATE threads SET lease_expires_at = $3 WHERE thread_id = $1 AND lease_token = $2 RETURNING true",
        thread_id,
        token,
        expires_at,
    )
    return renewed is not None


async def release_lease(connection: Connection, thread_id: str, token: str) -> None:
    await connection.execute(
        "UPDATE threads SET lease_token = NULL, lease_expires_at = NULL WHERE thread_id = $1 AND lease_token = $2",
        thread_id,
        token,
    )
