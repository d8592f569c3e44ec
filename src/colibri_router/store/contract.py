"""The parts of the ``Store`` contract every backend enforces the same way before it touches its
database: the checks on a call's arguments, and the formats of the ids it hands out. One copy here,
so the backends cannot drift apart on what they refuse or what an id looks like."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from colibri_router.store.budget import Reservation
from colibri_router.store.records import LedgerRow, ThreadLease

DEFAULT_RESERVATION_TTL_S = 3600.0
"""How long a budget reservation counts when its call never settles (its process died)."""


def new_thread_id() -> str:
    """``th_`` and 20 random URL-safe characters (120 bits: unguessable)."""
    return "th_" + secrets.token_urlsafe(15)


def new_reservation(principal: str, estimate_micro_usd: int, now: datetime, ttl: timedelta) -> Reservation:
    """The reservation an admitted call holds: ``rs_`` and 20 random characters, lasting ``ttl``."""
    require_principal(principal)
    if estimate_micro_usd < 0:
        raise ValueError(f"a cost estimate cannot be negative, got {estimate_micro_usd}")
    return Reservation(
        reservation_id="rs_" + secrets.token_urlsafe(15),
        principal=principal,
        estimate_micro_usd=estimate_micro_usd,
        created_at=now,
        expires_at=now + ttl,
    )


def require_principal(principal: str) -> None:
    if not principal:
        raise ValueError("a principal (the caller's name) is required")


def require_lifetimes(thread_ttl_days: float, lease_s: float, reservation_ttl_s: float) -> None:
    if thread_ttl_days <= 0 or lease_s <= 0 or reservation_ttl_s <= 0:
        raise ValueError("thread_ttl_days, lease_s and reservation_ttl_s must be above 0")


def require_lease_for(lease: ThreadLease | None, thread_id: str, principal: str) -> None:
    """An append passes the lease of the thread it appends to, or none."""
    if lease is not None and (lease.thread_id, lease.principal) != (thread_id, principal):
        raise ValueError("the lease passed to append_turns is for another thread or principal")


def require_listing_limit(limit: int) -> None:
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")


def require_settlement(reservation: Reservation, row: LedgerRow) -> None:
    if row.principal != reservation.principal:
        raise ValueError("a reservation is settled by a ledger row of the same principal")
