"""A SQLite file that cannot be used is a StoreError naming the path and the cause, on every call,
and the store recovers by itself once the file is usable again. (PostgreSQL: test_store_postgres.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from store_support import every_operation_fails

from colibri_router.store.sqlite import SqliteStore


async def test_a_corrupt_file_is_a_store_error_with_path_and_cause(tmp_path: Path) -> None:
    path = tmp_path / "colibri.db"
    path.write_bytes(b"this is not a database, just garbage bytes " * 100)
    store = SqliteStore(path, thread_ttl_days=30)

    for error in await every_operation_fails(store):
        assert error.path == str(path)
        assert isinstance(error.cause, sqlite3.DatabaseError)
        assert error.__cause__ is error.cause
        assert str(path) in str(error)
        assert "file is not a database" in str(error)
        assert error.code == "STORE_ERROR"

    path.unlink()  # the user moved the broken file away: the next call opens a fresh one
    assert await store.list_threads("alice") == []
    await store.aclose()


async def test_a_read_only_directory_is_a_store_error(tmp_path: Path) -> None:
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        if _can_write_in(read_only):
            pytest.skip("this user writes into read-only directories anyway (root with CAP_DAC_OVERRIDE)")
        store = SqliteStore(read_only / "colibri.db", thread_ttl_days=30)
        for error in await every_operation_fails(store):
            assert error.path == str(read_only / "colibri.db")
            assert isinstance(error.cause, sqlite3.OperationalError)
    finally:
        read_only.chmod(0o700)


def _can_write_in(directory: Path) -> bool:
    probe = directory / "probe"
    try:
        probe.touch()
    except PermissionError:
        return False
    probe.unlink()
    return True


async def test_a_state_directory_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    """Unwritable even for root: the state directory's parent is a regular file."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    store = SqliteStore(blocker / "state" / "colibri.db", thread_ttl_days=30)
    for error in await every_operation_fails(store):
        assert error.path == str(blocker / "state" / "colibri.db")
        assert isinstance(error.cause, OSError)


async def test_a_database_path_that_is_a_directory_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "colibri.db").mkdir()
    store = SqliteStore(tmp_path / "colibri.db", thread_ttl_days=30)
    for error in await every_operation_fails(store):
        assert "unable to open database file" in str(error)
