"""The SQLite implementation of ``Store``: every method is one unit of work sent to the database's
worker thread (see ``connection``), with the rules themselves in the backend-neutral modules."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from colibri_router.store import usage
from colibri_router.store.budget import BudgetLimits, Reservation
from colibri_router.store.leasing import DEFAULT_LEASE_S, ThreadClaim
from colibri_router.store.records import GroupBy, LedgerRow, StoredThread, ThreadLease, ThreadSummary, UsageReport
from colibri_router.store.sqlite import ledger, reservations, threads
from colibri_router.store.sqlite.connection import DEFAULT_BUSY_TIMEOUT_S, SqliteDatabase
from colibri_router.store.sqlite.timestamps import to_ms
from colibri_router.store.titles import thread_title
from colibri_router.store.utc_windows import Clock, Since, utc_now, window_start

DEFAULT_RESERVATION_TTL_S = 3600.0
_MS_PER_DAY = 86_400_000


class SqliteStore:
    """Threads, the ledger and budget reservations in one SQLite file at ``path``.

    ``thread_ttl_days``: a thread not created or appended to for that long is gone.
    ``lease_s``: how long a thread lease outlives a holder that stopped renewing it (died).
    ``reservation_ttl_s``: how long a budget reservation counts if its call never settles.
    ``clock``: the current time (UTC-aware); tests move it instead of waiting.
    """

    def __init__(
        self,
        path: Path,
        *,
        thread_ttl_days: float,
        lease_s: float = DEFAULT_LEASE_S,
        reservation_ttl_s: float = DEFAULT_RESERVATION_TTL_S,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        clock: Clock = utc_now,
    ) -> None:
        if thread_ttl_days <= 0 or lease_s <= 0 or reservation_ttl_s <= 0:
            raise ValueError("thread_ttl_days, lease_s and reservation_ttl_s must be above 0")
        self._database = SqliteDatabase(path, busy_timeout_s=busy_timeout_s)
        self._thread_ttl_ms = round(thread_ttl_days * _MS_PER_DAY)
        self._lease_s = lease_s
        self._reservation_ttl = timedelta(seconds=reservation_ttl_s)
        self._clock = clock

    @property
    def location(self) -> str:
        return str(self._database.path)

    async def aclose(self) -> None:
        await self._database.aclose()

    # Threads

    async def create_thread(self, principal: str, provider: str, model: str) -> str:
        _require_principal(principal)
        thread_id = "th_" + secrets.token_urlsafe(15)
        now_ms = self._now_ms()
        await self._database.run(
            lambda c: threads.create(
                c,
                thread_id=thread_id,
                principal=principal,
                provider=provider,
                model=model,
                now_ms=now_ms,
                expiry_cutoff_ms=self._expiry_cutoff(now_ms),
            )
        )
        return thread_id

    async def load_thread(self, thread_id: str, principal: str | None) -> StoredThread:
        cutoff = self._expiry_cutoff(self._now_ms())
        return await self._database.run(lambda c: threads.load(c, thread_id, principal, cutoff))

    async def append_turns(
        self,
        thread_id: str,
        principal: str,
        messages: Sequence[Mapping[str, Any]],
        provider: str,
        model: str,
        *,
        lease: ThreadLease | None = None,
    ) -> None:
        if lease is not None and (lease.thread_id, lease.principal) != (thread_id, principal):
            raise ValueError("the lease passed to append_turns is for another thread or principal")
        stored = [dict(message) for message in messages]
        token = None if lease is None else lease.token
        now_ms = self._now_ms()
        cutoff = self._expiry_cutoff(now_ms)
        await self._database.run(
            lambda c: threads.append(
                c,
                thread_id=thread_id,
                principal=principal,
                messages=stored,
                title=thread_title(stored),
                provider=provider,
                model=model,
                lease_token=token,
                now_ms=now_ms,
                expiry_cutoff_ms=cutoff,
            )
        )

    async def list_threads(self, principal: str | None, limit: int = 20) -> list[ThreadSummary]:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        cutoff = self._expiry_cutoff(self._now_ms())
        return await self._database.run(lambda c: threads.summaries(c, principal, limit, cutoff))

    async def delete_thread(self, thread_id: str, principal: str | None) -> bool:
        cutoff = self._expiry_cutoff(self._now_ms())
        return await self._database.run(lambda c: threads.delete(c, thread_id, principal, cutoff))

    def claim_thread(self, thread_id: str, principal: str, wait_s: float) -> ThreadClaim:
        return ThreadClaim(self, thread_id, principal, wait_s=wait_s, lease_s=self._lease_s)

    # Lease operations, for ThreadClaim (not part of the Store interface)

    async def take_lease(self, lease: ThreadLease, lease_s: float) -> bool:
        now_ms = self._now_ms()
        expires_ms = now_ms + round(lease_s * 1000)
        cutoff = self._expiry_cutoff(now_ms)
        return await self._database.run(
            lambda c: threads.take_lease(
                c,
                thread_id=lease.thread_id,
                principal=lease.principal,
                token=lease.token,
                now_ms=now_ms,
                expires_at_ms=expires_ms,
                expiry_cutoff_ms=cutoff,
            )
        )

    async def renew_lease(self, lease: ThreadLease, lease_s: float) -> bool:
        expires_ms = self._now_ms() + round(lease_s * 1000)
        return await self._database.run(lambda c: threads.renew_lease(c, lease.thread_id, lease.token, expires_ms))

    async def release_lease(self, lease: ThreadLease) -> None:
        await self._database.run(lambda c: threads.release_lease(c, lease.thread_id, lease.token))

    # Ledger

    async def record_call(self, row: LedgerRow) -> None:
        await self._database.run(lambda c: ledger.insert(c, row))

    async def usage_report(self, principal: str | None, since: Since = "all", by: GroupBy | None = None) -> UsageReport:
        starts_at = window_start(since, self._clock())
        since_ms = None if starts_at is None else to_ms(starts_at)
        groups = await self._database.run(lambda c: ledger.totals(c, principal, since_ms, by))
        return usage.build_report(since, by, starts_at, groups)

    # Budgets

    async def reserve_budget(self, principal: str, estimate_micro_usd: int, limits: BudgetLimits) -> Reservation:
        _require_principal(principal)
        if estimate_micro_usd < 0:
            raise ValueError(f"a cost estimate cannot be negative, got {estimate_micro_usd}")
        now = self._clock()
        reservation = Reservation(
            reservation_id="rs_" + secrets.token_urlsafe(15),
            principal=principal,
            estimate_micro_usd=estimate_micro_usd,
            created_at=now,
            expires_at=now + self._reservation_ttl,
        )
        await self._database.run(lambda c: reservations.reserve(c, reservation, limits, now))
        return reservation

    async def settle(self, reservation: Reservation, row: LedgerRow) -> None:
        if row.principal != reservation.principal:
            raise ValueError("a reservation is settled by a ledger row of the same principal")
        await self._database.run(lambda c: reservations.settle(c, reservation.reservation_id, row))

    def _now_ms(self) -> int:
        return to_ms(self._clock())

    def _expiry_cutoff(self, now_ms: int) -> int:
        """Threads last used at or before this instant have expired."""
        return now_ms - self._thread_ttl_ms


def _require_principal(principal: str) -> None:
    if not principal:
        raise ValueError("a principal (the caller's name) is required")
