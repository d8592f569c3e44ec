"""Thread SQL: each function is one unit of work on the connection, run in a worker thread.

A thread is *live* while ``updated_at_ms > expiry_cutoff_ms`` (it was created or appended to within
the TTL); anything else reads as unknown, and is deleted when the store next purges. A thread's
lease (``lease_token``, ``lease_expires_at_ms``) is held while the token is set and has not expired.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from colibri_router.store.errors import ThreadBusy, ThreadNotFound
from colibri_router.store.media import deflate, inflate, referenced
from colibri_router.store.records import StoredThread, ThreadSummary
from colibri_router.store.sqlite.filters import where
from colibri_router.store.sqlite.timestamps import from_ms
from colibri_router.store.sqlite.transactions import read_transaction, write_transaction

_SUMMARY_COLUMNS = "thread_id, principal, title, provider, model, turns, created_at_ms, updated_at_ms"


def purge_expired(connection: sqlite3.Connection, expiry_cutoff_ms: int) -> None:
    """Delete threads past their TTL (messages go with them, by cascade). Cheap: an index range."""
    connection.execute("DELETE FROM threads WHERE updated_at_ms <= ?", (expiry_cutoff_ms,))


def create(
    connection: sqlite3.Connection,
    *,
    thread_id: str,
    principal: str,
    provider: str,
    model: str,
    now_ms: int,
    expiry_cutoff_ms: int,
) -> None:
    with write_transaction(connection):
        purge_expired(connection, expiry_cutoff_ms)
        connection.execute(
            "INSERT INTO threads (thread_id, principal, provider, model, created_at_ms, updated_at_ms)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (thread_id, principal, provider, model, now_ms, now_ms),
        )


def load(connection: sqlite3.Connection, thread_id: str, principal: str | None, expiry_cutoff_ms: int) -> StoredThread:
    clause, parameters = where(("thread_id = ?", thread_id), ("principal = ?", principal))
    with read_transaction(connection):
        row = connection.execute(
            f"SELECT principal, provider, model, title, created_at_ms, updated_at_ms FROM threads{clause}", parameters
        ).fetchone()
        if row is not None and row[5] > expiry_cutoff_ms:
            messages = [
                json.loads(text)
                for (text,) in connection.execute(
                    "SELECT message FROM thread_messages WHERE thread_id = ? ORDER BY position", (thread_id,)
                )
            ]
            if referenced(messages):
                blobs = connection.execute("SELECT sha256, data FROM thread_media WHERE thread_id = ?", (thread_id,))
                messages = inflate(messages, dict(blobs.fetchall()))
            owner, provider, model, title, created_at_ms, updated_at_ms = row
            return StoredThread(
                thread_id, owner, provider, model, title, messages, from_ms(created_at_ms), from_ms(updated_at_ms)
            )
    if row is not None:
        with write_transaction(connection):
            connection.execute(
                "DELETE FROM threads WHERE thread_id = ? AND updated_at_ms <= ?", (thread_id, expiry_cutoff_ms)
            )
    raise ThreadNotFound(thread_id)


def append(
    connection: sqlite3.Connection,
    *,
    thread_id: str,
    principal: str,
    messages: Sequence[dict[str, Any]],
    title: str,
    provider: str,
    model: str,
    lease_token: str | None,
    now_ms: int,
    expiry_cutoff_ms: int,
) -> None:
    """Append ``messages`` after the stored ones. ``title`` (the new messages' title) is kept only
    if the thread has none yet. Refused while another call's lease holds the thread."""
    stored, blobs = deflate(messages)
    encoded = [json.dumps(message, ensure_ascii=False, separators=(",", ":")) for message in stored]
    with write_transaction(connection):
        row = connection.execute(
            "SELECT turns, lease_token, lease_expires_at_ms FROM threads"
            " WHERE thread_id = ? AND principal = ? AND updated_at_ms > ?",
            (thread_id, principal, expiry_cutoff_ms),
        ).fetchone()
        if row is None:
            raise ThreadNotFound(thread_id)
        turns, holder, holder_expires_at_ms = row
        if holder is not None and holder != lease_token and holder_expires_at_ms > now_ms:
            raise ThreadBusy(thread_id, None)
        connection.executemany(
            "INSERT INTO thread_messages (thread_id, position, message) VALUES (?, ?, ?)",
            [(thread_id, turns + offset, text) for offset, text in enumerate(encoded)],
        )
        connection.executemany(
            "INSERT OR IGNORE INTO thread_media (thread_id, sha256, data) VALUES (?, ?, ?)",
            [(thread_id, digest, data) for digest, data in blobs.items()],
        )
        connection.execute(
            "UPDATE threads SET turns = turns + ?, provider = ?, model = ?, updated_at_ms = ?,"
            " title = CASE WHEN title = '' THEN ? ELSE title END WHERE thread_id = ?",
            (len(encoded), provider, model, now_ms, title, thread_id),
        )


def summaries(
    connection: sqlite3.Connection, principal: str | None, limit: int, expiry_cutoff_ms: int
) -> list[ThreadSummary]:
    clause, parameters = where(("principal = ?", principal))
    with write_transaction(connection):
        purge_expired(connection, expiry_cutoff_ms)
        rows = connection.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM threads{clause} ORDER BY updated_at_ms DESC, rowid DESC LIMIT ?",
            (*parameters, limit),
        ).fetchall()
    return [
        ThreadSummary(thread_id, owner, title, provider, model, turns, from_ms(created_ms), from_ms(updated_ms))
        for thread_id, owner, title, provider, model, turns, created_ms, updated_ms in rows
    ]


def delete(connection: sqlite3.Connection, thread_id: str, principal: str | None, expiry_cutoff_ms: int) -> bool:
    clause, parameters = where(("thread_id = ?", thread_id), ("principal = ?", principal))
    with write_transaction(connection):
        purge_expired(connection, expiry_cutoff_ms)
        return connection.execute(f"DELETE FROM threads{clause}", parameters).rowcount > 0


def take_lease(
    connection: sqlite3.Connection,
    *,
    thread_id: str,
    principal: str,
    token: str,
    now_ms: int,
    expires_at_ms: int,
    expiry_cutoff_ms: int,
) -> bool:
    """Take the lease if nobody holds it (or the holder's lease lapsed); one atomic UPDATE.
    False when another call holds it; :class:`ThreadNotFound` when there is no such live thread."""
    taken = connection.execute(
        "UPDATE threads SET lease_token = ?, lease_expires_at_ms = ?"
        " WHERE thread_id = ? AND principal = ? AND updated_at_ms > ?"
        " AND (lease_token IS NULL OR lease_expires_at_ms <= ?)",
        (token, expires_at_ms, thread_id, principal, expiry_cutoff_ms, now_ms),
    )
    if taken.rowcount == 1:
        return True
    exists = connection.execute(
        "SELECT 1 FROM threads WHERE thread_id = ? AND principal = ? AND updated_at_ms > ?",
        (thread_id, principal, expiry_cutoff_ms),
    ).fetchone()
    if exists is None:
        raise ThreadNotFound(thread_id)
    return False


def renew_lease(connection: sqlite3.Connection, thread_id: str, token: str, expires_at_ms: int) -> bool:
    """Extend our lease; False if it is no longer ours (it lapsed and another call took it)."""
    renewed = connection.execute(
        "UPDATE threads SET lease_expires_at_ms = ? WHERE thread_id = ? AND lease_token = ?",
        (expires_at_ms, thread_id, token),
    )
    return renewed.rowcount == 1


def release_lease(connection: sqlite3.Connection, thread_id: str, token: str) -> None:
    connection.execute(
        "UPDATE threads SET lease_token = NULL, lease_expires_at_ms = NULL WHERE thread_id = ? AND lease_token = ?",
        (thread_id, token),
    )
