"""The records the store hands out and takes in: frozen, backend-neutral, no text of prompts or
answers outside a thread's own messages. Times are timezone-aware UTC datetimes."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any, Literal, TypeAlias

from colibri_router.store.money import micro_to_usd
from colibri_router.store.utc_windows import Since, as_utc

GroupBy: TypeAlias = Literal["provider", "model", "day"]

OK_OUTCOME = "ok"


@dataclass(frozen=True, slots=True)
class StoredThread:
    """A thread and its whole history. ``messages`` are Anthropic Messages-shape dicts, decoded fresh
    on every load (changing them changes nothing stored)."""

    thread_id: str
    principal: str
    provider: str
    model: str
    title: str
    messages: list[dict[str, Any]]
    created_at: datetime
    updated_at: datetime

    @property
    def turns(self) -> int:
        """Stored messages, user and assistant alike."""
        return len(self.messages)


@dataclass(frozen=True, slots=True)
class ThreadSummary:
    """One line of a thread listing. ``provider`` and ``model`` are those of the latest append."""

    thread_id: str
    principal: str
    title: str
    provider: str
    model: str
    turns: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class ThreadLease:
    """Proof that one call holds a thread (see ``Store.claim_thread``); pass it to ``append_turns``."""

    thread_id: str
    principal: str
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class LedgerAttempt:
    """One model a call tried, in order (fallbacks): ``outcome`` is ``"ok"`` or the error code."""

    provider: str
    model: str
    outcome: str
    kind: str | None
    latency_ms: int


def encode_attempts(attempts: tuple[LedgerAttempt, ...]) -> str:
    """The ledger column's text: a JSON array of the attempts' fields."""
    return json.dumps([asdict(attempt) for attempt in attempts], separators=(",", ":"))


def decode_attempts(text: str) -> tuple[LedgerAttempt, ...]:
    return tuple(LedgerAttempt(**attempt) for attempt in json.loads(text))


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerRow:
    """One ``router_call``, success or failure: counts and cost, never prompt or answer text.

    ``outcome`` is ``"ok"`` or the error code the call ended with; ``kind`` the error kind (None on
    success). ``cost_micro_usd`` is None when the model has no price. ``at`` is normalized to UTC.
    ``attempts``: each model tried (empty when the call never reached one); ``warning_count``: how
    many warnings its result carried (their text is not kept: it can name the caller's files).
    """

    at: datetime
    principal: str
    thread_id: str | None
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_micro_usd: int | None = None
    latency_ms: int = 0
    outcome: str = OK_OUTCOME
    kind: str | None = None
    attempts: tuple[LedgerAttempt, ...] = ()
    warning_count: int = 0
    key_fingerprint: str | None = None  # the pool key that answered or failed last (docs/keys.md); never the key

    def __post_init__(self) -> None:
        object.__setattr__(self, "at", as_utc(self.at))
        counts = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "latency_ms": self.latency_ms,
            "warning_count": self.warning_count,
            "cost_micro_usd": 0 if self.cost_micro_usd is None else self.cost_micro_usd,
        }
        negative = [name for name, value in counts.items() if value < 0]
        if negative:
            raise ValueError(f"ledger counts cannot be negative: {', '.join(negative)}")
        if not self.outcome:
            raise ValueError("a ledger row needs an outcome: 'ok' or the error code")

    @property
    def is_error(self) -> bool:
        return self.outcome != OK_OUTCOME

    def values(self) -> tuple[Any, ...]:
        """The row's values after ``at``, in the order of :data:`LEDGER_COLUMNS` (attempts as JSON text)."""
        return tuple(
            encode_attempts(self.attempts) if column == "attempts" else getattr(self, column)
            for column in LEDGER_COLUMNS
        )

    @classmethod
    def from_columns(cls, at: datetime, values: dict[str, Any]) -> LedgerRow:
        """A row read back: ``values`` by column name, as :meth:`values` wrote them."""
        return cls(at=at, **(values | {"attempts": decode_attempts(values["attempts"])}))


# The ledger table's columns after its time column (whose name and type each backend chooses): the
# fields of LedgerRow, in order, so that a new field is a new column in both backends' INSERT.
LEDGER_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(LedgerRow))[1:]


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Sums over a group of ledger rows. ``key`` names the group (a provider, a model, or a UTC day
    as ``YYYY-MM-DD``); None for the overall total. ``cost_micro_usd`` sums the priced calls only;
    ``unpriced_calls`` says how many calls it leaves out."""

    key: str | None
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_micro_usd: int
    unpriced_calls: int

    @property
    def cost_usd(self) -> float:
        return micro_to_usd(self.cost_micro_usd)


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Totals since ``starts_at`` (None for ``since="all"``). ``groups`` is empty when ``by`` is None;
    days come in date order, providers and models by cost (highest first), then name."""

    since: Since
    by: GroupBy | None
    starts_at: datetime | None
    groups: tuple[UsageTotals, ...]
    total: UsageTotals
