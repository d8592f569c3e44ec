"""The advisory locks colibri-router takes, all in one place so that no two ideas share a key.

PostgreSQL's advisory locks are named by a 64-bit number, database-wide. Each key below is the ASCII
of ``colibri`` followed by one byte naming what it guards: recognisable in ``pg_locks`` (``objid``
and ``classid`` show its halves) and unlikely to meet another application's keys in a shared database.
"""

from __future__ import annotations

_PREFIX = int.from_bytes(b"colibri") << 8

SCHEMA_MIGRATION = _PREFIX | 1
"""Held while a process brings the schema up to date, so two first uses do not both create it."""

BUDGET_ADMISSION = _PREFIX | 2
"""Held by each budget admission from its check to its reservation: admissions in every process
then happen one after another, which is what the admission rule needs."""

RATE_ADMISSION_CLASS = 0x636F6C69  # "coli": with a member name's hash, the two-key lock of its rates
"""Held by each rate admission (with the member's name hashed as the second key) from its check to
its event: one member's uses in every process then happen one after another."""
