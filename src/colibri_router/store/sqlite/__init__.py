"""The SQLite backend: one file shared by every colibri-router process of one user (WAL mode)."""

from colibri_router.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
