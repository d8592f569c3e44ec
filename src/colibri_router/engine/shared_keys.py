"""The pool keys set aside, shared by a team server's replicas through their database (docs/keys.md).

A :class:`~colibri_router.engine.keys.KeyPool` asks its store synchronously, on every call's path, so
this keeps a snapshot in memory: a call first refreshes it when it is older than :data:`CACHE_S`
(one query a second at most, per process), a key set aside here enters the snapshot at once and is
written in the background, where the other replicas read it at their next refresh. A replica so
learns of a key set aside elsewhere within about a second; until then it may send that key one
request more, answered with the same refusal. A database that cannot be reached costs the sharing,
never a call: the replica goes on with what it knows (logged once).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, cast

from colibri_router.engine.keys import Reason, SetAside
from colibri_router.errors import ColibriError
from colibri_router.logs import get_logger

if TYPE_CHECKING:
    from colibri_router.store import KeySharing

__all__ = ["CACHE_S", "SharedSetAsides"]

CACHE_S = 1.0
_REASONS = frozenset({"rate_limited", "out_of_quota", "invalid"})


class SharedSetAsides:
    """A :class:`~colibri_router.engine.keys.SetAsideStore` over a :class:`KeySharing` database."""

    def __init__(self, store: KeySharing, *, cache_s: float = CACHE_S, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._cache_s = cache_s
        self._clock = clock
        self._rows: dict[str, dict[str, SetAside]] = {}
        self._read_at = -math.inf
        self._writes: set[asyncio.Task[None]] = set()
        # Set aside here, not yet in the database: kept through a refresh that cannot see them yet.
        self._unwritten: dict[tuple[str, str], SetAside] = {}
        self._failing = False

    def current(self, provider: str) -> list[SetAside]:
        return list(self._rows.get(provider, {}).values())

    def record(self, provider: str, entry: SetAside) -> None:
        self._rows.setdefault(provider, {})[entry.fingerprint] = entry
        self._unwritten[(provider, entry.fingerprint)] = entry
        # PostgreSQL's double precision holds infinity: a rejected key stays aside on every replica.
        row = (provider, entry.fingerprint, entry.reason, entry.until, entry.strikes)
        self._spawn(self._written(provider, entry, self._store.set_key_aside(row, self._clock())))

    def clear(self, provider: str, key_fingerprint: str) -> None:
        self._rows.get(provider, {}).pop(key_fingerprint, None)
        self._unwritten.pop((provider, key_fingerprint), None)
        self._spawn(self._store.clear_key(provider, key_fingerprint))

    async def refresh(self, *, force: bool = False) -> None:
        """Read what every replica has set aside, when the snapshot is older than the cache time."""
        now = self._clock()
        if not force and now - self._read_at < self._cache_s:
            return
        self._read_at = now
        try:
            rows = await self._store.key_set_asides(now)
        except ColibriError as error:
            self._failed("read", error)
            return
        self._failing = False
        fresh: dict[str, dict[str, SetAside]] = {}
        for provider, fingerprint, reason, until, strikes in rows:
            if reason in _REASONS:
                fresh.setdefault(provider, {})[fingerprint] = SetAside(
                    fingerprint, cast(Reason, reason), until, strikes
                )
        for (provider, fingerprint), entry in self._unwritten.items():
            fresh.setdefault(provider, {})[fingerprint] = entry
        self._rows = fresh

    async def flush(self) -> None:
        """Wait for the writes under way (a test, or a replica shutting down)."""
        while self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)

    def _spawn(self, write: Coroutine[Any, Any, None]) -> None:
        try:
            task = asyncio.get_running_loop().create_task(self._guarded(write))
        except RuntimeError:  # no event loop: nothing to share with
            write.close()
            return
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _written(self, provider: str, entry: SetAside, write: Coroutine[Any, Any, None]) -> None:
        await write  # a failure leaves the entry unwritten: this replica keeps it, the others never see it
        if self._unwritten.get((provider, entry.fingerprint)) is entry:
            del self._unwritten[(provider, entry.fingerprint)]

    async def _guarded(self, write: Coroutine[Any, Any, None]) -> None:
        try:
            await write
        except ColibriError as error:
            self._failed("write", error)

    def _failed(self, what: str, error: ColibriError) -> None:
        if not self._failing:
            get_logger(__name__).warning(
                f"set-aside keys cannot be shared ({what} failed): this replica goes on alone", problem=error.message
            )
        self._failing = True
