"""The store: where threads and the ledger live, whether this process can write there, the schema
version and the size. Nothing is created or migrated: a SQLite file is opened read-only, a PostgreSQL
database is asked only questions. A PostgreSQL URL is shown without its password."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from colibri_router.checkup import Section
from colibri_router.errors import ConfigError
from colibri_router.redaction import redact
from colibri_router.settings import load_settings
from colibri_router.store import check_database, database_location, without_password
from colibri_router.store.sqlite.schema import CURRENT_VERSION, schema_version

CONNECT_TIMEOUT_S = 5.0


async def store() -> Section:

    try:
        settings = load_settings()
        if settings.store == "off":
            return Section("store", "off", "off (COLIBRI_STORE=off): no threads, ledger or budgets", {"backend": None})
        location = database_location(settings)
        check_database(settings)
    except ConfigError as error:
        section = Section("store", "ok", "unusable")
        section.fail(error.message)
        return section
    if isinstance(location, Path):
        return _sqlite(location)
    return await _postgres(location)


def _sqlite(path: Path) -> Section:

    fields: dict[str, Any] = {"backend": "sqlite", "location": str(path), "exists": path.exists()}
    section = Section("store", "ok", "", fields)
    if not path.exists():
        parent = _nearest_existing(path.parent)
        writable = os.access(parent, os.W_OK | os.X_OK)
        fields.update(writable=writable, schema_version=0, size_bytes=0)
        section.summary = f"sqlite {path}: not created yet (the first call creates it)"
        if not writable:
            section.fail(f"the store {str(path)!r} cannot be created: {str(parent)!r} is not writable")
        return section
    writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)
    size = sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())
    fields.update(writable=writable, size_bytes=size)
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            version = schema_version(connection)
        finally:
            connection.close()
    except sqlite3.Error as error:
        fields["schema_version"] = None
        section.summary = f"sqlite {path}: unreadable"
        section.fail(f"the store {str(path)!r} cannot be read: {error}")
        return section
    fields["schema_version"] = version
    section.summary = f"sqlite {path}: {'writable' if writable else 'READ-ONLY'}, schema {version}, {_size(size)}"
    if not writable:
        section.fail(f"the store {str(path)!r} is not writable by this user (threads and the ledger need it)")
    if version > CURRENT_VERSION:
        section.fail(
            f"the store {str(path)!r} has schema version {version}, written by a newer colibri-router "
            f"(this one knows up to {CURRENT_VERSION})"
        )
    return section


async def _postgres(url: str) -> Section:
    import asyncpg

    # The postgres extra (asyncpg): imported only when the store is PostgreSQL.
    from colibri_router.store.postgres.schema import MIGRATIONS, schema_version

    shown = without_password(url)
    fields: dict[str, Any] = {"backend": "postgresql", "location": shown}
    section = Section("store", "ok", "", fields)
    try:
        connection = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        section.summary = f"postgresql {shown}: unreachable"
        section.fail(f"the store {shown!r} cannot be reached: {type(error).__name__}: {_without(error, url)}")
        return section
    try:
        version = await schema_version(connection)  # type: ignore[arg-type]  # a plain connection will do
        size: int = await connection.fetchval("SELECT pg_database_size(current_database())")
        table = "ledger" if version else None
        writable: bool = await connection.fetchval(
            "SELECT NOT pg_is_in_recovery() AND "
            + (
                "has_table_privilege('ledger', 'INSERT')"
                if table
                else "has_schema_privilege(current_schema(), 'CREATE')"
            )
        )
    finally:
        await connection.close()
    fields.update(writable=writable, schema_version=version, size_bytes=size)
    section.summary = f"postgresql {shown}: {'writable' if writable else 'READ-ONLY'}, schema {version}, {_size(size)}"
    if not writable:
        section.fail(f"the store {shown!r} is not writable by this user")
    if version > len(MIGRATIONS):
        section.fail(f"the store {shown!r} has schema version {version}, written by a newer colibri-router")
    return section


def _without(error: BaseException, url: str) -> str:
    from urllib.parse import urlsplit

    password = urlsplit(url).password
    return redact(str(error), password) if password else str(error)


def _nearest_existing(directory: Path) -> Path:
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    return directory


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    scaled = float(size)
    for unit in ("KB", "MB", "GB"):
        scaled /= 1024
        if scaled < 1024 or unit == "GB":
            break
    return f"{scaled:.1f} {unit}"
