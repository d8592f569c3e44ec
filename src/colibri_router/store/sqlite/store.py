"""The SQLite implementation of ``Store``: every method is one unit of work sent to the database's
worker thread (see ``connection``; the ledger's grouped rows run on the event loop when that cannot
wait), with the rules themselves in the backend-neutral modules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from colibri_router.store import contract, usage
from colibri_router.store.budget import BudgetLimits, Reservation
from colibri_router.store.calls import CallQuery, DaySpend, SpendBy, StoredCall, require_spend_by
from colibri_router.store.contract import DEFAULT_RESERVATION_TTL_S
from colibri_router.store.grouping import GroupedWrites
from colibri_router.store.jobs import JobRecord, JobStatus, expiry_cutoff
from colibri_router.store.leasing import DEFAULT_LEASE_S, ThreadClaim
from colibri_router.store.rates import RateLimits, RateRefusal, new_event_id
from colibri_router.store.records import GroupBy, LedgerRow, StoredThread, ThreadLease, ThreadSummary, UsageReport
from colibri_router.store.sqlite import calls, jobs, ledger, rates, reservations, threads
from colibri_router.store.sqlite.connection import DEFAULT_BUSY_TIMEOUT_S, SqliteDatabase
from colibri_router.store.sqlite.timestamps import to_ms
from colibri_router.store.titles import thread_title
from colibri_router.store.utc_windows import Clock, Since, utc_now, window_start

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
        contract.require_lifetimes(thread_ttl_days, lease_s, reservation_ttl_s)
        self._database = SqliteDatabase(path, busy_timeout_s=busy_timeout_s)
        # Rows of concurrent calls share a commit (see grouping), on the event loop when it cannot wait.
        self._ledger_rows: GroupedWrites[tuple[str | None, LedgerRow]] = GroupedWrites(
            lambda group: self._database.write(lambda c: ledger.write_group(c, group))
        )
        self._thread_ttl_ms = round(thread_ttl_days * _MS_PER_DAY)
        self._lease_s = lease_s
        self._reservation_ttl = timedelta(seconds=reservation_ttl_s)
        self._clock = clock

    @property
    def location(self) -> str:
        return str(self._database.path)

    async def check(self) -> None:
        await self._database.run(lambda c: c.execute("SELECT 1").fetchone())

    async def aclose(self) -> None:
        await self._database.aclose()

    # Threads

    async def create_thread(self, principal: str, provider: str, model: str) -> str:
        contract.require_principal(principal)
        thread_id = contract.new_thread_id()
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
        contract.require_lease_for(lease, thread_id, principal)
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
        contract.require_listing_limit(limit)
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
        await self._ledger_rows.submit((None, row))

    async def usage_report(self, principal: str | None, since: Since = "all", by: GroupBy | None = None) -> UsageReport:
        starts_at = window_start(since, self._clock())
        since_ms = None if starts_at is None else to_ms(starts_at)
        groups = await self._database.run(lambda c: ledger.totals(c, principal, since_ms, by))
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
        now = self._clock()
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
        event_id, now_ms = new_event_id(), self._now_ms()
        refused = await self._database.write(  # short: on the event loop when it cannot wait
            lambda c: rates.take(c, event_id, principal, now_ms, limits, calls=calls, tokens=tokens)
        )
        return event_id, refused

    async def settle_rate(self, event_id: str, tokens: int) -> None:
        """The tokens an admitted use really counted, in place of its estimate."""
        await self._database.write(lambda c: rates.settle(c, event_id, tokens))

    # Jobs (colibri_router.jobs)

    async def create_job(self, job: JobRecord, ttl_s: float) -> None:
        cutoff = to_ms(expiry_cutoff(self._clock(), ttl_s))
        await self._database.run(lambda c: jobs.create(c, job, cutoff))

    async def update_job(self, job_id: str, owner: str, progress: str | None, cost_micro_usd: int) -> bool | None:
        now_ms = self._now_ms()
        return await self._database.run(
            lambda c: jobs.update(
                c, job_id, owner=owner, progress=progress, cost_micro_usd=cost_micro_usd, now_ms=now_ms
            )
        )

    async def job_cancel_requested(self, job_id: str) -> bool:
        return await self._database.run(lambda c: jobs.cancel_requested(c, job_id))

    async def finish_job(
        self, job_id: str, owner: str | None, status: JobStatus, result: str, cost_micro_usd: int | None
    ) -> bool:
        now_ms = self._now_ms()
        return await self._database.run(
            lambda c: jobs.finish(
                c, job_id, owner=owner, status=status, result=result, cost_micro_usd=cost_micro_usd, now_ms=now_ms
            )
        )

    async def load_job(self, job_id: str, principal: str, ttl_s: float) -> JobRecord | None:
        cutoff = to_ms(expiry_cutoff(self._clock(), ttl_s))
        return await self._database.run(lambda c: jobs.load(c, job_id, principal, cutoff))

    async def list_jobs(self, principal: str, limit: int, ttl_s: float) -> list[JobRecord]:
        contract.require_listing_limit(limit)
        cutoff = to_ms(expiry_cutoff(self._clock(), ttl_s))
        return await self._database.run(lambda c: jobs.recent(c, principal, limit, cutoff))

    async def list_team_jobs(self, principal: str | None, limit: int, ttl_s: float) -> list[JobRecord]:
        contract.require_listing_limit(limit)
        cutoff = to_ms(expiry_cutoff(self._clock(), ttl_s))
        return await self._database.run(lambda c: jobs.recent(c, principal, limit, cutoff))

    async def request_job_cancel(self, job_id: str, principal: str) -> bool:
        return await self._database.run(lambda c: jobs.request_cancel(c, job_id, principal))

    def _now_ms(self) -> int:
        return to_ms(self._clock())

    def _expiry_cutoff(self, now_ms: int) -> int:
        """Threads last used at or before this instant have expired."""
        return now_ms - self._thread_ttl_ms
