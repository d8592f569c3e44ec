"""One call's way through its provider's key pool (docs/keys.md): which key each request goes with.

The call starts with the pool's next key in turn. A failure that is the key's (a rate limit, an
exhausted quota, a rejected key) sets the key aside and the same request goes at once to the next
usable key: that is not one of the call's retries. When no key is left the call gets one error, of
the kind of the keys' state (``RATE_LIMITED`` when one is only rate limited, else ``QUOTA_EXCEEDED``,
else ``AUTH_FAILED``), with ``retry_after`` the soonest return; the retry rule then treats it like any
other failure (a rate limit may be waited out, the soonest key is then tried again).
"""

from __future__ import annotations

import anyio

from colibri_router import observability
from colibri_router.engine.keys import FOREVER, REASON_OF_KIND, KeyPool, SetAside
from colibri_router.errors import ApiError, ErrorFamily, Kind
from colibri_router.logs import get_logger

__all__ = ["SHARE_WAIT_S", "KeyRotation"]

SHARE_WAIT_S = 1.0

_SAID = {"rate_limited": "rate-limited", "out_of_quota": "out of quota", "invalid": "rejected as invalid"}


class KeyRotation:
    """The key of each request of one call. Without a pool (one key, or a key the caller passed) it
    is just that key, and nothing is ever set aside."""

    __slots__ = ("_index", "_own", "_pool", "_resumed", "_single", "_tried", "warnings")

    def __init__(self, pool: KeyPool | None, key: str | None) -> None:
        self._pool = pool if pool is not None and len(pool) > 1 else None
        self._single = key if self._pool is None else None
        self._index = self._pool.first() if self._pool is not None else 0
        self._tried: list[int] = []
        self._own: ApiError | None = None  # the "every key is set aside" error this call made
        self._resumed = False  # a retry's wait is over: the next request goes, set aside or not
        self.warnings: list[str] = []

    @property
    def key(self) -> str | None:
        return self._pool.key(self._index) if self._pool is not None else self._single

    @property
    def fingerprint(self) -> str | None:
        """The current key's fingerprint (None without a pool: one key needs no naming)."""
        return self._pool.fingerprints[self._index] if self._pool is not None else None

    def secrets(self) -> tuple[str, ...]:
        """Every key this call may use, to scrub from what an upstream echoes."""
        if self._pool is not None:
            return self._pool.keys
        return (self._single,) if self._single else ()

    def check(self, errors: ErrorFamily) -> ApiError | None:
        """Before a request: the error to report when the current key is set aside and so is every
        other (None: send it)."""
        if self._pool is None or self._resumed or self._pool.usable(self._index):
            self._resumed = False
            return None
        return self._exhausted(errors)

    def resume(self) -> None:
        """After a retry's wait: the key set aside for the shortest time, tried again (as a single
        key would be), unless another one has become usable meanwhile."""
        if self._pool is None:
            return
        usable = self._pool.next_usable((), self._index - 1)
        soonest = self._pool.soonest()
        chosen = usable if usable is not None else soonest
        if chosen is not None:
            self._index = chosen
            self._resumed = True
        self._tried.clear()

    def failed(self, error: ApiError, errors: ErrorFamily) -> ApiError | None:
        """The current key's request failed with ``error``. Returns None when the request should go at
        once to the next key (now current), else the error the call goes on with (``error`` itself,
        or the pool's when every key is set aside)."""
        reason = REASON_OF_KIND.get(error.kind)
        if self._pool is None or reason is None or error is self._own or _answer_begun(error):
            return error
        entry = self._pool.set_aside(self._index, reason, error.retry_after)
        self._note(entry)
        self._tried.append(self._index)
        following = self._pool.next_usable(self._tried, self._index)
        if following is None:
            return self._exhausted(errors)
        self._index = following
        self._pool.moved_to(following)
        return None

    async def shared(self) -> None:
        """Before the call returns: the keys it set aside written where the other replicas read them,
        waiting at most :data:`SHARE_WAIT_S` (a database that is slow costs the sharing, not the call)."""
        pool = self._pool
        if self.warnings and pool is not None and pool.store is not None:
            with anyio.move_on_after(SHARE_WAIT_S):
                await pool.store.flush()

    def answered(self) -> None:
        if self._pool is not None:
            self._pool.answered(self._index)

    def _note(self, entry: SetAside) -> None:
        said = _SAID[entry.reason]
        if entry.until == FOREVER:
            line = f"key {entry.fingerprint} {said}: set aside until restart"
        else:
            line = f"key {entry.fingerprint} {said}: set aside for {_duration(entry.until - self._now())}"
        self.warnings.append(line)
        get_logger().warning(line)
        observability.key_set_aside(self._pool.provider if self._pool else "", entry.fingerprint, entry.reason)

    def _now(self) -> float:
        assert self._pool is not None
        return self._pool.now()

    def _exhausted(self, errors: ErrorFamily) -> ApiError:
        assert self._pool is not None
        pool, now = self._pool, self._now()
        aside = pool.set_aside_now()
        entries = [aside[fp] for fp in pool.fingerprints if fp in aside]
        reasons = {entry.reason for entry in entries}
        # A key that came back while the others were tried (set aside briefly) is as good as rate limited.
        kind: Kind = (
            "RATE_LIMITED"
            if "rate_limited" in reasons or len(entries) < len(pool)
            else "QUOTA_EXCEEDED"
            if "out_of_quota" in reasons
            else "AUTH_FAILED"
        )
        returning = [entry.until for entry in entries if entry.until < FOREVER]
        if len(entries) < len(pool):
            returning.append(now)
        retry_after = round(max(0.0, min(returning) - now), 3) if returning else None
        soonest = pool.soonest()
        if soonest is not None:
            self._index = soonest
        described = ", ".join(f"{entry.fingerprint} {_SAID[entry.reason]}" for entry in entries)
        when = f"; the soonest returns in {_duration(retry_after)}" if retry_after is not None else ""
        self._own = errors.api(
            f"every {pool.provider} key is set aside ({described}){when}",
            status=429 if kind == "RATE_LIMITED" else None,
            retryable=kind == "RATE_LIMITED",
            retry_after=retry_after,
            kind=kind,
        )
        return self._own


def _answer_begun(error: ApiError) -> bool:
    """An error event inside an answer that had begun (a 200 the router will not retry): sending the
    request again, with any key, would bill the output twice."""
    return error.status == 200 and not error.retryable


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
