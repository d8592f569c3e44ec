"""The PostgreSQL backend: one database shared by the replicas of a team server (asyncpg).

Importing this package imports asyncpg (the ``postgres`` extra); ``colibri_router.store.open_store``
does so only when ``COLIBRI_DATABASE_URL`` names a PostgreSQL database.
"""

from colibri_router.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
