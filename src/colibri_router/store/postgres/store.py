"""The PostgreSQL implementation of ``Store`` (and ``CancelBroadcast`` and ``KeySharing``), for a team server whose
replicas share one database: every method is one unit of work on a pooled connection (see
``connection``), with the rules themselves in the backend-neutral modules, exactly as for SQLite."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from colibri_router.store import contract, usage, without_password
from colibri_router.store.budget import BudgetLimits, Reservation
from colibri_router.store.calls import CallQuery, DaySpend, SpendBy, StoredCall, require_spend_by
from colibri_router.store.contract import DEFAULT_RESERVATION_TTL_S
from colibri_router.store.grouping import GroupedWrites
from colibri_router.store.jobs import JobRecord, JobStatus, expiry_cutoff
from colibri_router.store.leasing import DEFAULT_LEASE_S, ThreadClaim
from colibri_router.store.postgres import calls, cancels, jobs, keys, ledger, rates, reservations, threads
from colibri_router.store.postgres.cancels import CancelListener
from colibri_router.store.postgres.connection import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    PostgresDatabase,
)
from colibri_router.store.rates import RateLimits, RateRefusal, new_event_id
from colibri_router.store.records import GroupBy, LedgerRow, StoredThread, ThreadLease, ThreadSummary, UsageReport
from colibri_router.store.titles import thread_title
from colibri_router.store.utc_windows import Clock, Since, as_utc, utc_now, window_start

_CHECK_TIMEOUT_S = 2.0


class PostgresStore:
    """Threads, the ledger and budget reservations in the PostgreSQL database at ``url``
    (``postgresql://`` or ``postgres://``, as libpq and asyncpg read it).

    ``thread_ttl_days``, ``lease_s``, ``reservation_ttl_s`` and ``clock`` mean what they mean for
    ``SqliteStore``; the store's clock, never the server's, decides what has expired.
    ``max_connections``: the most connections each event loop's pool opens.
    ``connect_timeout_s``: how long a connection attempt may take before it is a StoreError.
    """

    def __init__(
        self,
        url: str,
        *,
        thread_ttl_days: float,
        lease_s: float = DEFAULT_LEASE_S,
        reservation_ttl_s: float = DEFAULT_RESERVATION_TTL_S,
        clock: Clock = utc_now,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> None:
        contract.require_lifetimes(thread_ttl_days, lease_s, reservation_ttl_s)
        self._database = PostgresDatabase(
            url, without_password(url), max_connections=max_connections, connect_timeout_s=connect_timeout_s
        )
        # Rows of concurrent calls share a connection and a commit (see grouping).
        self._ledger_rows: GroupedWrites[tuple[str | None, LedgerRow]] = GroupedWrites(
            lambda group: self._database.run(lambda c: ledger.write_group(c, group))
        )
        self._thread_ttl = timedelta(days=thread_ttl_days)
        self._lease_s = lease_s
        self._reservation_ttl = timedelta(seconds=reservation_ttl_s)
        self._clock = clock

    @property
    def location(self) -> str:
        """The URL without its password."""
        return self._database.location

    async def check(self) -> None:
        # Its own timeout: a server that stopped answering must not hold a readiness probe a minute.
        await self._database.run(lambda c: c.fetchval("SELECT 1", timeout=_CHECK_TIMEOUT_S))

    async def aclose(self) -> None:
        await self._database.aclose()

    # Threads

    async def create_thread(self, principal: str, provider: str, model: str) -> str:
        contract.require_principal(principal)
        thread_id = contract.new_thread_id()
        now = self._now()
        await self._database.run(
            lambda c: threads.create(
                c,
                thread_id=thread_id,
                principal=principal,
                provider=provider,
                model=model,
                now=now,
                expiry_cutoff=self._expiry_cutoff(now),
            )
        )
        return thread_id

    async def load_thread(self, thread_id: str, principal: str | None) -> StoredThread:
        cutoff = self._expiry_cutoff(self._now())
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
        contract.require_lease_for(lease, thread_id, principal)
        stored = [dict(message) for message in messages]
        token = None if lease is None else lease.token
        now = self._now()
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
                now=now,
                expiry_cutoff=self._expiry_cutoff(now),
            )
        )

    async def list_threads(self, principal: str | None, limit: int = 20) -> list[ThreadSummary]:
        contract.require_listing_limit(limit)
        cutoff = self._expiry_cutoff(self._now())
        return await self._database.run(lambda c: threads.summaries(c, principal, limit, cutoff))

    async def delete_thread(self, thread_id: str, principal: str | None) -> bool:
        cutoff = self._expiry_cutoff(self._now())
        return await self._database.run(lambda c: threads.delete(c, thread_id, principal, cutoff))

    def claim_thread(self, thread_id: str, principal: str, wait_s: float) -> ThreadClaim:
        return ThreadClaim(self, thread_id, principal, wait_s=wait_s, lease_s=self._lease_s)

    # Lease operations, for ThreadClaim (not part of the Store interface)

    async def take_lease(self, lease: ThreadLease, lease_s: float) -> bool:
        now = self._now()
        return await self._database.run(
            lambda c: threads.take_lease(
                c,
                thread_id=lease.thread_id,
                principal=lease.principal,
                token=lease.token,
                now=now,
                expires_at=now + timedelta(seconds=lease_s),
                expiry_cutoff=self._expiry_cutoff(now),
            )
        )

    async def renew_lease(self, lease: ThreadLease, lease_s: float) -> bool:
        expires_at = self._now() + timedelta(seconds=lease_s)
        return await self._database.run(lambda c: threads.renew_lease(c, lease.thread_id, lease.token, expires_at))

    async def release_lease(self, lease: ThreadLease) -> None:
        await self._database.run(lambda c: threads.release_lease(c, lease.thread_id, lease.token))

    # Ledger

    async def record_call(self, row: LedgerRow) -> None:
        await self._ledger_rows.submit((None, row))

    async def usage_report(self, principal: str | None, since: Since = "all", by: GroupBy | None = None) -> UsageReport:
        starts_at = window_start(since, self._now())
        groups = await self._database.run(lambda c: ledger.totals(c, principal, starts_at, by))
        return usage.build_report(since, by, starts_at, groups)

    async def get_call(self, call_id: int, principal: str | None) -> StoredCall | None:
        return await self._database.run(lambda c: calls.one(c, call_id, principal))

    async def list_calls(self, query: CallQuery) -> list[StoredCall]:
        return await self._database.run(lambda c: calls.recent(c, query))

    async def spend_by_day(self, principal: str | None, since: datetime, by: SpendBy) -> list[DaySpend]:
        require_spend_by(by)
        return await self._database.run(lambda c: calls.spend_by_day(c, principal, since, by))

    # Budgets

    async def reserve_budget(self, principal: str, estimate_micro_usd: int, limits: BudgetLimits) -> Reservation:
        now = self._now()
        reservation = contract.new_reservation(principal, estimate_micro_usd, now, self._reservation_ttl)
        await self._database.run(lambda c: reservations.reserve(c, reservation, limits, now))
        return reservation

    async def settle(self, reservation: Reservation, row: LedgerRow) -> None:
        contract.require_settlement(reservation, row)
        await self._ledger_rows.submit((reservation.reservation_id, row))

    # Per-member rates (a team server's rpm and tpm; see colibri_router.store.rates)

    async def take_rate(
        self, principal: str, limits: RateLimits, *, calls: int, tokens: int
    ) -> tuple[str, RateRefusal | None]:
        """Admit one use (its event id) or say why not (the refusal; nothing recorded)."""
        contract.require_principal(principal)
        event_id = new_event_id()
        refused = await self._database.run(
            lambda c: rates.take(c, event_id, principal, limits, calls=calls, tokens=tokens)
        )
        return event_id, refused

    async def settle_rate(self, event_id: str, tokens: int) -> None:
        """The tokens an admitted use really counted, in place of its estimate."""
        await self._database.run(lambda c: rates.settle(c, event_id, tokens))

    # Jobs (colibri_router.jobs)

    async def create_job(self, job: JobRecord, ttl_s: float) -> None:
        cutoff = expiry_cutoff(self._now(), ttl_s)
        await self._database.run(lambda c: jobs.create(c, job, cutoff))

    async def update_job(self, job_id: str, owner: str, progress: str | None, cost_micro_usd: int) -> bool | None:
        now = self._now()
        return await self._database.run(
            lambda c: jobs.update(c, job_id, owner=owner, progress=progress, cost_micro_usd=cost_micro_usd, now=now)
        )

    async def job_cancel_requested(self, job_id: str) -> bool:
        return await self._database.run(lambda c: jobs.cancel_requested(c, job_id))

    async def finish_job(
        self, job_id: str, owner: str | None, status: JobStatus, result: str, cost_micro_usd: int | None
    ) -> bool:
        now = self._now()
        return await self._database.run(
            lambda c: jobs.finish(
                c, job_id, owner=owner, status=status, result=result, cost_micro_usd=cost_micro_usd, now=now
            )
        )

    async def load_job(self, job_id: str, principal: str, ttl_s: float) -> JobRecord | None:
        cutoff = expiry_cutoff(self._now(), ttl_s)
        return await self._database.run(lambda c: jobs.load(c, job_id, principal, cutoff))

    async def list_jobs(self, principal: str, limit: int, ttl_s: float) -> list[JobRecord]:
        contract.require_listing_limit(limit)
        cutoff = expiry_cutoff(self._now(), ttl_s)
        return await self._database.run(lambda c: jobs.recent(c, principal, limit, cutoff))

    async def list_team_jobs(self, principal: str | None, limit: int, ttl_s: float) -> list[JobRecord]:
        contract.require_listing_limit(limit)
        cutoff = expiry_cutoff(self._now(), ttl_s)
        return await self._database.run(lambda c: jobs.recent(c, principal, limit, cutoff))

    async def request_job_cancel(self, job_id: str, principal: str) -> bool:
        return await self._database.run(lambda c: jobs.request_cancel(c, job_id, principal))

    # Cancellations between processes (CancelBroadcast)

    async def publish_cancel(self, key: str) -> None:
        cancels.check_key(key)
        await self._database.run(lambda c: cancels.publish(c, key))

    def cancel_listener(self, on_cancel: Callable[[str], None]) -> CancelListener:
        return CancelListener(self._database, on_cancel)

    # Pool keys set aside, shared by the replicas (docs/keys.md)

    async def key_set_asides(self, now: float) -> list[keys.SetAsideRow]:
        return await self._database.run(lambda c: keys.current(c, now))

    async def set_key_aside(self, row: keys.SetAsideRow, now: float) -> None:
        await self._database.run(lambda c: keys.record(c, row, now))

    async def clear_key(self, provider: str, fingerprint: str) -> None:
        await self._database.run(lambda c: keys.clear(c, provider, fingerprint))

    def _now(self) -> datetime:
        return as_utc(self._clock())

    def _expiry_cutoff(self, now: datetime) -> datetime:
        """Threads last used at or before this instant have expired."""
        return now - self._thread_ttl
