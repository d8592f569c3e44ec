"""A provider's API keys as a pool: used in turn, set aside while the provider refuses one (docs/keys.md).

A key variable may hold several keys separated by commas (no known provider issues keys with a
comma in them), and a config-file entry may name several variables. Each call starts at the next
key in turn. A key the provider answers with a rate limit, an exhausted quota or a rejection is set
aside, and the call goes on at once with the next usable key:

- rate limited (429): until its ``Retry-After``, else for :data:`RATE_BACKOFF_S` doubling with each
  consecutive rate limit of that key, at most :data:`MAX_RATE_BACKOFF_S`;
- out of quota (``insufficient_quota``, Gemini's per-day ``QuotaFailure``, 402...): for
  :data:`QUOTA_BACKOFF_S` doubling with repeats, at most :data:`MAX_QUOTA_BACKOFF_S` (or the
  provider's hint when it is longer);
- rejected (401, 403, Gemini's ``API_KEY_INVALID``): until the process restarts.

A pool of one key is never set aside: there is no other key to go to, and a single bad answer must
not lock the provider out (each call asks the provider, as it always did).

A key is named only by its :func:`fingerprint`; the key itself stays in this module's memory, as the
environment holds it. The set-aside state is per process, or shared between replicas through a
:class:`SetAsideStore` (the team server's PostgreSQL).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

__all__ = [
    "MAX_QUOTA_BACKOFF_S",
    "MAX_RATE_BACKOFF_S",
    "QUOTA_BACKOFF_S",
    "RATE_BACKOFF_S",
    "REASON_OF_KIND",
    "KeyPool",
    "KeyStatus",
    "Reason",
    "SetAside",
    "SetAsideStore",
    "fingerprint",
    "pool_for",
    "reset_pools",
    "split_keys",
]

Reason: TypeAlias = Literal["rate_limited", "out_of_quota", "invalid"]
# The error kinds that are the key's, not the request's or the model's, and what each makes of the key.
REASON_OF_KIND: Mapping[str, Reason] = {
    "RATE_LIMITED": "rate_limited",
    "QUOTA_EXCEEDED": "out_of_quota",
    "AUTH_FAILED": "invalid",
}

RATE_BACKOFF_S = 1.0  # a 429 without Retry-After: 1, 2, 4... s for consecutive rate limits of one key
MAX_RATE_BACKOFF_S = 60.0
QUOTA_BACKOFF_S = 3600.0  # out of quota: 1 h, then 2, 4... h while it stays out
MAX_QUOTA_BACKOFF_S = 86400.0
FOREVER = math.inf  # a rejected key: until the process restarts

Clock = Callable[[], float]


def split_keys(value: str | None) -> tuple[str, ...]:
    """The keys a variable holds: comma-separated, blanks around them ignored, empty items dropped."""
    if not value:
        return ()
    return tuple(part.strip() for part in value.split(",") if part.strip())


def fingerprint(provider: str, key: str) -> str:
    """``<provider>#<first six hex digits of the key's SHA-256>``: names a key in warnings, attempts, the
    ledger, metrics, traces, doctor and router_models without revealing any of it (a key's last
    characters would give away most of a short one). ``printf %s "$KEY" | sha256sum | cut -c1-6``
    finds which key it is."""
    return f"{provider}#{hashlib.sha256(key.encode()).hexdigest()[:6]}"


@dataclass(frozen=True, slots=True)
class SetAside:
    """One key set aside: why, until when (wall-clock seconds; inf: until restart), and its strikes."""

    fingerprint: str
    reason: Reason
    until: float
    strikes: int = 1

    def seconds_left(self, now: float) -> float:
        return max(0.0, self.until - now)


@dataclass(frozen=True, slots=True)
class KeyStatus:
    """What doctor, router_models and /ui show of a key: its fingerprint and state now."""

    fingerprint: str
    state: Literal["usable", "rate_limited", "out_of_quota", "invalid"]
    seconds_left: float | None  # None: usable, or set aside until restart
    until: float | None = None  # wall-clock seconds it comes back at; None as above
    strikes: int = 0  # consecutive set-asides for the same reason (0: usable)


class SetAsideStore(Protocol):
    """Where set-aside keys are shared between replicas (the team server's PostgreSQL). Reads may be
    a little stale (a short cache); a write is seen by the other replicas at their next read."""

    def current(self, provider: str) -> Iterable[SetAside]: ...

    def record(self, provider: str, entry: SetAside) -> None: ...

    def clear(self, provider: str, key_fingerprint: str) -> None: ...

    async def refresh(self, *, force: bool = False) -> None:
        """Read the replicas' state again when the cached one is old (a call's first step)."""
        ...

    async def flush(self) -> None:
        """Wait for the writes under way (a call that set keys aside, before it returns)."""
        ...


class KeyPool:
    """One provider's keys and which of them are set aside. Thread-safe; shared by every call in the
    process that uses the same provider with the same keys."""

    def __init__(self, provider: str, keys: Sequence[str], *, clock: Clock = time.time) -> None:
        if not keys:
            raise ValueError("a key pool needs at least one key")
        self.provider = provider
        self._keys = tuple(keys)
        self.fingerprints = tuple(fingerprint(provider, key) for key in self._keys)
        self._clock = clock
        self._aside: dict[str, SetAside] = {}
        self._cursor = 0
        self._lock = threading.Lock()
        self.store: SetAsideStore | None = None

    def __repr__(self) -> str:  # never the keys, even in a traceback's locals
        return f"KeyPool({self.provider!r}, {len(self._keys)} keys)"

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def keys(self) -> tuple[str, ...]:
        return self._keys

    def now(self) -> float:
        return self._clock()

    def key(self, index: int) -> str:
        return self._keys[index]

    def first(self) -> int:
        """The index a new call starts with: the next key in turn that is usable now (the next in turn
        when none is: the caller finds it set aside and reports why)."""
        with self._lock:
            aside = self._current_aside()
            start = self._cursor
            self._cursor = (self._cursor + 1) % len(self._keys)
            for step in range(len(self._keys)):
                index = (start + step) % len(self._keys)
                if self.fingerprints[index] not in aside:
                    self._cursor = (index + 1) % len(self._keys)
                    return index
            return start

    def moved_to(self, index: int) -> None:
        """A call went on to key ``index``: the next call starts after it (the load stays spread)."""
        with self._lock:
            self._cursor = (index + 1) % len(self._keys)

    def preferred(self) -> int:
        """The first usable key in the listed order, without taking a turn (a model list, doctor)."""
        aside = self.set_aside_now()
        return next((i for i, fp in enumerate(self.fingerprints) if fp not in aside), 0)

    def usable(self, index: int) -> bool:
        return self.fingerprints[index] not in self.set_aside_now()

    def next_usable(self, tried: Iterable[int], after: int) -> int | None:
        """The first usable key after ``after`` in turn that this call has not tried, if any."""
        skip = set(tried)
        aside = self.set_aside_now()
        for step in range(1, len(self._keys) + 1):
            index = (after + step) % len(self._keys)
            if index not in skip and self.fingerprints[index] not in aside:
                return index
        return None

    def soonest(self) -> int | None:
        """The key set aside for the shortest time that may come back (not a rejected one)."""
        aside = self.set_aside_now()
        returning = [
            (aside[fp].until, i) for i, fp in enumerate(self.fingerprints) if fp in aside and aside[fp].until < FOREVER
        ]
        return min(returning)[1] if returning else None

    def set_aside(self, index: int, reason: Reason, hint_s: float | None) -> SetAside:
        """Set the key aside for ``reason``; ``hint_s`` is the provider's own wait (Retry-After)."""
        fp = self.fingerprints[index]
        now = self._clock()
        with self._lock:
            before = self._aside.get(fp)
            strikes = before.strikes + 1 if before is not None and before.reason == reason else 1
            entry = SetAside(fp, reason, now + _wait(reason, strikes, hint_s), strikes)
            self._aside[fp] = entry
        if self.store is not None:
            self.store.record(self.provider, entry)
        return entry

    def answered(self, index: int) -> None:
        """The key answered: its strikes are forgotten (its next rate limit starts the backoff over)."""
        fp = self.fingerprints[index]
        with self._lock:
            had = self._aside.pop(fp, None)
        if self.store is not None and (
            had is not None or any(e.fingerprint == fp for e in self.store.current(self.provider))
        ):
            self.store.clear(self.provider, fp)  # set aside here or by another replica: back for every one

    def set_aside_now(self) -> dict[str, SetAside]:
        """The keys set aside at this moment, by fingerprint (this process's, and the replicas')."""
        with self._lock:
            return self._current_aside()

    def statuses(self) -> list[KeyStatus]:
        now = self._clock()
        aside = self.set_aside_now()
        statuses = []
        for fp in self.fingerprints:
            entry = aside.get(fp)
            if entry is None:
                statuses.append(KeyStatus(fp, "usable", None))
            else:
                forever = entry.until == FOREVER
                left = None if forever else round(entry.seconds_left(now), 1)
                statuses.append(KeyStatus(fp, entry.reason, left, None if forever else entry.until, entry.strikes))
        return statuses

    def _current_aside(self) -> dict[str, SetAside]:
        now = self._clock()
        if self.store is None:
            entries = self._aside
        else:
            # Shared: the store's view decides (this process's set-asides enter it at once), so a key
            # any replica found answering again is back everywhere; the local entries keep the strikes.
            mine = frozenset(self.fingerprints)
            entries = {e.fingerprint: e for e in self.store.current(self.provider) if e.fingerprint in mine}
        return {fp: entry for fp, entry in entries.items() if entry.until > now}


def _wait(reason: Reason, strikes: int, hint_s: float | None) -> float:
    if reason == "invalid":
        return FOREVER
    if reason == "rate_limited":
        if hint_s is not None and hint_s > 0:
            return hint_s
        return min(RATE_BACKOFF_S * 2.0 ** (strikes - 1), MAX_RATE_BACKOFF_S)
    backoff = min(QUOTA_BACKOFF_S * 2.0 ** (strikes - 1), MAX_QUOTA_BACKOFF_S)
    return max(backoff, hint_s or 0.0)


# One pool per provider and key list in this process: a changed variable makes a new pool.
_pools: dict[tuple[str, tuple[str, ...]], KeyPool] = {}
_pools_lock = threading.Lock()
_shared_store: list[SetAsideStore] = []  # the replicas' store, once the server has opened one


def pool_for(provider: str, keys: tuple[str, ...]) -> KeyPool:
    """The process's pool for these keys of ``provider``."""
    with _pools_lock:
        pool = _pools.get((provider, keys))
        if pool is None:
            pool = _pools[(provider, keys)] = KeyPool(provider, keys)
            pool.store = _shared_store[0] if _shared_store else None
        return pool


def share_through(store: SetAsideStore | None) -> None:
    """Share set-aside keys between replicas through ``store`` (None: this process only)."""
    with _pools_lock:
        _shared_store.clear()
        if store is not None:
            _shared_store.append(store)
        for pool in _pools.values():
            pool.store = store


def shared_set_asides() -> SetAsideStore | None:
    """The replicas' store the pools share through, if the server opened one."""
    with _pools_lock:
        return _shared_store[0] if _shared_store else None


def pools() -> list[KeyPool]:
    with _pools_lock:
        return list(_pools.values())


def reset_pools() -> None:
    """Forget every pool and its state (what a restart does)."""
    with _pools_lock:
        _pools.clear()
