"""Holding a thread for the length of one call, across processes, without holding a transaction.

A lease is a token and an expiry written on the thread's row in one atomic step, only when no live
lease is there. The holder renews it every third of its duration while the call runs, so the
duration can stay short: a process that dies mid-call stops renewing and its lease lapses within
``lease_s``, while a call that runs for minutes keeps its thread. A caller that finds the thread
held polls (10 ms, doubling to 100 ms) until the lease is released or lapses, or ``wait_s`` passes.

Appends check the lease (see ``Store.append_turns``), so even a holder whose lease lapsed (its
event loop stalled past ``lease_s``) cannot write over the call that took the thread next.
"""

from __future__ import annotations

import secrets
from types import TracebackType
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

from colibri_router.logs import get_logger
from colibri_router.store.errors import StoreError, ThreadBusy
from colibri_router.store.records import ThreadLease

DEFAULT_LEASE_S = 30.0
_FIRST_POLL_S = 0.01
_LONGEST_POLL_S = 0.1


class LeaseOperations(Protocol):
    """What a backend provides for leases; each is one atomic database operation."""

    async def take_lease(self, lease: ThreadLease, lease_s: float) -> bool:
        """True if taken; False if another live lease holds the thread; ``ThreadNotFound`` if the
        principal has no such live thread."""
        ...

    async def renew_lease(self, lease: ThreadLease, lease_s: float) -> bool:
        """True if the lease is still ours and now runs ``lease_s`` from now."""
        ...

    async def release_lease(self, lease: ThreadLease) -> None: ...


class ThreadClaim:
    """``async with`` it to hold a thread: entering waits for the lease (or raises ``ThreadBusy`` or
    ``ThreadNotFound``), leaving releases it, whatever way the body ends (cancellation included).
    The body's own exceptions pass through unchanged."""

    def __init__(
        self, operations: LeaseOperations, thread_id: str, principal: str, *, wait_s: float, lease_s: float
    ) -> None:
        if wait_s < 0 or lease_s <= 0:
            raise ValueError("wait_s must be at least 0 and lease_s above 0")
        self._operations = operations
        self._lease = ThreadLease(thread_id, principal, secrets.token_urlsafe(16))
        self._wait_s = wait_s
        self._lease_s = lease_s
        self._renewals: TaskGroup | None = None

    async def __aenter__(self) -> ThreadLease:
        await self._acquire()
        # The renewal task's group spans the body but is exited with no exception (see __aexit__),
        # so a failure in the body is never wrapped in an ExceptionGroup.
        renewals = anyio.create_task_group()
        try:
            await renewals.__aenter__()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._release()
            raise
        renewals.start_soon(self._keep_renewed)
        self._renewals = renewals
        return self._lease

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        renewals, self._renewals = self._renewals, None
        try:
            if renewals is not None:
                renewals.cancel_scope.cancel()
                await renewals.__aexit__(None, None, None)
        finally:
            with anyio.CancelScope(shield=True):
                await self._release()

    async def _acquire(self) -> None:
        started = anyio.current_time()
        poll_s = _FIRST_POLL_S
        while not await self._operations.take_lease(self._lease, self._lease_s):
            remaining = self._wait_s - (anyio.current_time() - started)
            if remaining <= 0:
                raise ThreadBusy(self._lease.thread_id, self._wait_s)
            await anyio.sleep(min(poll_s, remaining))
            poll_s = min(poll_s * 2, _LONGEST_POLL_S)

    async def _keep_renewed(self) -> None:
        """Renew until the lease turns out to be someone else's; a failed renewal is tried again at
        the next period (the database may only have been locked for a moment)."""
        while True:
            await anyio.sleep(self._lease_s / 3)
            try:
                if not await self._operations.renew_lease(self._lease, self._lease_s):
                    return
            except StoreError as error:
                _log_failure("thread lease renewal failed", self._lease, error)

    async def _release(self) -> None:
        try:
            await self._operations.release_lease(self._lease)
        except StoreError as error:
            # Nothing to undo: an unreleased lease lapses by itself within lease_s.
            _log_failure("thread lease release failed", self._lease, error)


def _log_failure(event: str, lease: ThreadLease, error: StoreError) -> None:
    get_logger(__name__).warning(event, thread_id=lease.thread_id, path=error.path, error=str(error.cause))
