"""Whether this server can serve calls now: what ``GET /readyz`` of ``serve --http`` answers.

``/healthz`` says the process is up; ``/readyz`` says its calls can work: the settings are usable and
the store (when on) answers a trivial statement. A load balancer that probes it takes a replica whose
database is gone out of rotation, and puts it back once the database answers again, with no restart.

Probes are cheap: one check runs at a time, and its answer is reused for a second, so a burst of
probes costs one round trip to the database. A check that takes longer than a few seconds counts as
a failure (a database that stopped answering is as good as gone). The log says when readiness
changes, with the cause; the answer itself names no database (the endpoint needs no token).
"""

from __future__ import annotations

import math
import time

import anyio

from colibri_router.errors import ConfigError
from colibri_router.logs import get_logger
from colibri_router.settings import load_settings
from colibri_router.store import StoreError, shared_store

CHECK_TIMEOUT_S = 3.0
REUSE_S = 1.0


class Readiness:
    """One server's readiness, checked on demand (see the module docstring)."""

    def __init__(self, *, reuse_s: float = REUSE_S, timeout_s: float = CHECK_TIMEOUT_S) -> None:
        self._reuse_s = reuse_s
        self._timeout_s = timeout_s
        self._checked_at = -math.inf
        self._problem: str | None = None
        self._lock = anyio.Lock()

    async def problem(self) -> str | None:
        """None when ready; else what is wrong, in a few words fit for an unauthenticated answer."""
        if time.monotonic() - self._checked_at < self._reuse_s:
            return self._problem
        async with self._lock:  # probes arriving together share one check
            if time.monotonic() - self._checked_at >= self._reuse_s:
                problem, cause = await self._check()
                if problem != self._problem:
                    log = get_logger(__name__)
                    if problem is None:
                        log.info("ready again")
                    else:
                        log.warning("not ready", problem=problem, cause=cause)
                self._problem, self._checked_at = problem, time.monotonic()
        return self._problem

    async def _check(self) -> tuple[str | None, str]:
        """The problem (None: ready) and its cause, for the log."""
        try:
            store = shared_store(load_settings())
        except ConfigError as error:
            return "settings unusable", error.message
        if store is None:
            return None, ""
        try:
            with anyio.fail_after(self._timeout_s):
                await store.check()
        except StoreError as error:
            return "store unavailable", f"{error.path}: {type(error.cause).__name__}: {error.cause}"
        except TimeoutError:
            return "store unavailable", f"{store.location} did not answer within {self._timeout_s:g} s"
        return None, ""
