"""A member's ``rpm`` and ``tpm``, counted where every replica sees them: in the store (SQLite for one
machine, PostgreSQL across replicas; the rule is :mod:`colibri_router.store.rates`). With the store
off (``COLIBRI_STORE=off``) they are counted in this process only, by the same rule."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from colibri_router.gateway.errors import NotAllowedError, PolicyRateLimited
from colibri_router.logs import get_logger
from colibri_router.settings import load_settings
from colibri_router.store import StoreError, shared_store
from colibri_router.store.rates import WINDOW_S, RateEvent, RateLimits, RateRefusal, admission, new_event_id
from colibri_router.token_estimate import request_tokens

if TYPE_CHECKING:
    from colibri_router.conversation import CompletionRequest
    from colibri_router.gateway.member import Member
    from colibri_router.providers import Choice


class RateStore(Protocol):
    async def take_rate(
        self, principal: str, limits: RateLimits, *, calls: int, tokens: int
    ) -> tuple[str, RateRefusal | None]: ...

    async def settle_rate(self, event_id: str, tokens: int) -> None: ...


@dataclass(frozen=True, slots=True)
class Taken:
    """One use :func:`take` admitted, to settle with its real token count."""

    store: RateStore | None  # None: this process's own count
    event_id: str

    async def settle(self, tokens: int) -> None:
        """The real token count in place of the estimate."""
        if self.store is None:
            _LOCAL.settle(self.event_id, tokens)
        else:
            await self.store.settle_rate(self.event_id, tokens)

    async def settle_or_log(self, tokens: int) -> None:
        """:meth:`settle`, a store failure logged instead of raised: the call it counts has answered."""
        try:
            await self.settle(tokens)
        except StoreError as error:
            # Logged under the policy's checks (.enforce), where the settling was asked for.
            get_logger("colibri_router.gateway.enforce").error(
                "tokens per minute not settled", path=error.path, error=str(error.cause)
            )


async def take(member: Member, *, calls: int, tokens: int) -> Taken:
    """Count one use (``calls`` calls, ``tokens`` estimated tokens) for ``member`` or raise
    :class:`PolicyRateLimited`. A store that cannot be reached raises its ``StoreError``: without it no
    limit can be held."""
    limits = RateLimits(rpm=member.rules.rpm, tpm=member.rules.tpm)
    store = shared_store(load_settings())
    if hasattr(store, "take_rate"):  # not isinstance: a runtime protocol check costs more than the rest
        rates = cast(RateStore, store)
        event_id, refused = await rates.take_rate(member.name, limits, calls=calls, tokens=tokens)
        taken = Taken(rates, event_id)
    else:
        event_id, refused = _LOCAL.take(member.name, limits, calls=calls, tokens=tokens)
        taken = Taken(None, event_id)
    if refused is not None:
        unit = "calls" if refused.limit == "rpm" else "tokens"
        raise PolicyRateLimited(
            f"{refused.limit} {refused.allowed} of the policy of {member.name!r} is used up: {refused.used} {unit} in "
            f"the last minute; retry in {refused.retry_after_s:.1f} s; nothing was sent",
            refused.retry_after_s,
        )
    return taken


async def take_tokens(member: Member, tpm: int, choice: Choice, request: CompletionRequest) -> Taken:
    """Take the request's estimated tokens (input and ``max_tokens``) from the member's ``tpm``; a
    request whose estimate alone exceeds it is refused (``NOT_ALLOWED``): no minute would admit it."""
    estimate = request_tokens(request) + request.max_tokens
    if estimate > tpm:
        raise NotAllowedError(
            f"the request's estimated {estimate} tokens (input and max_tokens) exceed tpm {tpm} of the "
            f"policy of {member.name!r}; lower max_tokens or the input; nothing was sent"
        ).about(choice.provider.name, choice.model)
    return await take(member, calls=0, tokens=estimate)


class _Local:
    """The rule over this process's own events, when there is no store."""

    def __init__(self) -> None:
        self._events: dict[str, dict[str, RateEvent]] = {}
        self._lock = threading.Lock()

    def take(self, member: str, limits: RateLimits, *, calls: int, tokens: int) -> tuple[str, RateRefusal | None]:
        now, event_id = time.monotonic(), new_event_id()
        with self._lock:
            events = self._events.setdefault(member, {})
            for key in [key for key, event in events.items() if event.at_s <= now - WINDOW_S]:
                del events[key]
            refused = admission(events.values(), now, limits, calls=calls, tokens=tokens)
            if refused is None:
                events[event_id] = RateEvent(now, calls, tokens)
        return event_id, refused

    def settle(self, event_id: str, tokens: int) -> None:
        with self._lock:
            for events in self._events.values():
                if event_id in events:
                    event = events[event_id]
                    events[event_id] = RateEvent(event.at_s, event.calls, tokens)


_LOCAL = _Local()
