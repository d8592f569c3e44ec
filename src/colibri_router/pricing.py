"""The cost of a call, from the price data bundled with the ``genai-prices`` package.

Token counts come in as :class:`TokenCounts`, whose totals include their parts: ``input_tokens``
counts cached and cache-written tokens too, ``output_tokens`` counts reasoning tokens. That is also
how genai-prices reads its ``Usage`` (it prices each part at its own rate and the rest of the total
at the plain rate), so the counts map across one to one.

Pricing never fails a call: an unknown model is a null cost with a warning, and local servers cost
nothing. The network is never used unless ``COLIBRI_PRICE_UPDATES`` opts in; then one background
fetch per process replaces the bundled data, and a failed fetch only logs a warning.

genai-prices is imported on the first price, not with this module: its import (and its price
table's) would otherwise land on the server's start-up time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from colibri_router.logs import get_logger
from colibri_router.settings import variable

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, ModelPrice, Provider, Usage

PRICE_UPDATES_VARIABLE = "COLIBRI_PRICE_UPDATES"
LOCAL_SOURCE = "local"
_OPT_IN_VALUES = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """What a call used. Totals include their parts: ``input_tokens`` counts ``cached_tokens`` and
    ``cache_write_tokens``; ``output_tokens`` counts ``reasoning_tokens``."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __post_init__(self) -> None:
        negative = [field.name for field in fields(self) if getattr(self, field.name) < 0]
        if negative:
            raise ValueError(f"token counts cannot be negative: {', '.join(negative)}")


@dataclass(frozen=True, slots=True)
class Price:
    """``cost_usd`` is None when no price is known; ``source`` names the price data used
    (``"genai-prices 0.2.3"``, ``"local"``); ``warning`` says why a cost is missing or approximate."""

    cost_usd: float | None
    source: str | None
    warning: str | None = None


def price_call(price_provider: str | None, model: str, usage: TokenCounts, *, local: bool = False) -> Price:
    """The cost of one call to ``model`` at genai-prices' provider ``price_provider``.

    ``price_provider`` None lets genai-prices pick the provider from the model name. A model served
    under a prefix (``moonshotai/kimi-k2``) is looked up as given, then by its last path segment.
    ``local`` servers cost 0. Never raises for an unknown provider or model.
    """
    if local:
        return Price(cost_usd=0.0, source=LOCAL_SOURCE)
    _start_price_update_if_opted_in()
    calculation = _calculate(price_provider, model, usage)
    if isinstance(calculation, str):
        return Price(cost_usd=None, source=None, warning=calculation)
    return Price(cost_usd=float(calculation.total_price), source=_source(calculation), warning=_inconsistency(usage))


def worst_case_cost(
    price_provider: str | None, model: str, input_tokens: int, max_output_tokens: int, *, local: bool = False
) -> float | None:
    """The most a call with ``input_tokens`` of input and up to ``max_output_tokens`` of output can
    cost, for budgets: output at the output rate, input at the dearer of the plain input rate and
    the cache-write rate (where writing a cache costs more than plain input, a caching request can
    pay that rate on all of its input). None when no price is known."""
    if local:
        return 0.0
    _start_price_update_if_opted_in()
    plain = TokenCounts(input_tokens=input_tokens, output_tokens=max_output_tokens)
    all_written = TokenCounts(
        input_tokens=input_tokens, output_tokens=max_output_tokens, cache_write_tokens=input_tokens
    )
    costs = [
        float(calculation.total_price)
        for counts in (plain, all_written)
        if not isinstance(calculation := _calculate(price_provider, model, counts), str)
    ]
    return max(costs, default=None)


def context_window(price_provider: str | None, model: str) -> int | None:
    """The model's context window (input tokens) from the price data, when it holds one."""
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    for reference in (model, model.rsplit("/", 1)[-1]):
        try:
            _, info = snapshot.find_provider_model(reference, None, price_provider, None)
        except LookupError:
            continue
        return info.context_window
    return None


def known_models(price_provider: str) -> list[str]:
    """Model names the price data knows for ``price_provider`` (sorted; empty for an unknown provider).

    Each is a name the price lookup resolves to that model: the model's id where it does, else the
    first exact name in its matching rule (Fireworks lists ``kimi-k2p6`` but is called with
    ``accounts/fireworks/models/kimi-k2p6``). A model matched only by a prefix or a fragment, with
    an id that does not match itself, has no such name and is left out.
    """
    from genai_prices import data_snapshot

    _start_price_update_if_opted_in()
    provider = data_snapshot.find_provider_by_id(data_snapshot.get_snapshot().providers, price_provider)
    if provider is None:
        return []
    names = (_callable_name(provider, model) for model in provider.models)
    return sorted({name for name in names if name is not None})


def _callable_name(provider: Provider, model: ModelInfo) -> str | None:
    for candidate in (model.id, *_exact_names(model.match)):
        # The provider's own lookup decides: an earlier model with a broader rule may claim the name.
        if provider.find_model(candidate) is model:
            return candidate
    return None


def _exact_names(rule: object) -> list[str]:
    from genai_prices.types import ClauseAnd, ClauseEquals, ClauseOr

    if isinstance(rule, ClauseEquals):
        return [rule.equals]
    if isinstance(rule, ClauseOr):
        return [name for clause in rule.or_ for name in _exact_names(clause)]
    if isinstance(rule, ClauseAnd):
        return [name for clause in rule.and_ for name in _exact_names(clause)]
    return []


def _prices_usage(counts: TokenCounts) -> Usage:
    """genai-prices' ``Usage`` for ``counts``.

    genai-prices refuses parts larger than their total; a provider that reports them so has left
    part of its total out, so the total is raised to the sum of its parts rather than losing the cost.
    """
    from genai_prices import Usage

    return Usage(
        input_tokens=max(counts.input_tokens, counts.cached_tokens + counts.cache_write_tokens),
        cache_read_tokens=counts.cached_tokens,
        cache_write_tokens=counts.cache_write_tokens,
        output_tokens=max(counts.output_tokens, counts.reasoning_tokens),
        output_reasoning_tokens=counts.reasoning_tokens,
    )


def _inconsistency(counts: TokenCounts) -> str | None:
    """What :func:`_prices_usage` had to correct in ``counts``, said for the price's warning."""
    problems = []
    input_parts = counts.cached_tokens + counts.cache_write_tokens
    if input_parts > counts.input_tokens:
        problems.append(f"cached and cache-written tokens ({input_parts}) exceed input tokens ({counts.input_tokens})")
    if counts.reasoning_tokens > counts.output_tokens:
        problems.append(f"reasoning tokens ({counts.reasoning_tokens}) exceed output tokens ({counts.output_tokens})")
    if not problems:
        return None
    return f"usage inconsistent, priced with the totals raised to their parts: {'; '.join(problems)}"


@dataclass(frozen=True, slots=True)
class _Calculation:
    total_price: Decimal
    fetched: bool  # priced from fetched data (COLIBRI_PRICE_UPDATES), not the bundled table


def _calculate(price_provider: str | None, model: str, counts: TokenCounts) -> _Calculation | str:
    """genai-prices' total for ``counts``, or the warning that explains why there is none.

    What genai-prices' ``calc_price`` does, in its steps: find the model (genai-prices caches that),
    pick the prices in force now (dated and time-of-day prices stay exact: this runs on every call),
    adjust the usage of the few models billed by the second (token counts hold nothing it adjusts),
    then price the usage with them: the one step worth caching (about 25 us a call, mostly usage
    validation and decomposition). That is a pure function of those prices and the counts, so it is
    cached on them (see :func:`_total`). New price data brings new price objects, hence new entries.
    """
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    references = [model]
    if "/" in model:
        references.append(model.rsplit("/", 1)[1])
    for reference in references:
        try:
            _provider, info = snapshot.find_provider_model(reference, None, price_provider, None)
            total = _total(info.get_prices(datetime.now(tz=UTC)), counts)
        except LookupError:
            continue
        except ValueError as exc:
            # Only fetched price data can hold a price genai-prices cannot apply; the call stands.
            return f"price data for {_label(price_provider, model)} is unusable ({exc}); cost_usd is null"
        return _Calculation(total, fetched=snapshot.from_auto_update)
    return f"no price known for {_label(price_provider, model)}; cost_usd is null"


_TOTALS_LIMIT = 1024
# (id of the prices, counts) -> (the prices, their total): the prices are kept with their total, so an
# id reused by another object after the first is gone never matches (the ``is`` check below).
_totals: dict[tuple[int, TokenCounts], tuple[ModelPrice, Decimal]] = {}


def _total(prices: ModelPrice, counts: TokenCounts) -> Decimal:
    """``prices.calc_price`` of the counts' usage, cached on the price object and the counts (genai-prices'
    price objects are unhashable, so the key holds their id and the entry the object itself)."""
    key = (id(prices), counts)
    entry = _totals.get(key)
    if entry is not None and entry[0] is prices:
        return entry[1]
    total = prices.calc_price(_prices_usage(counts))["total_price"]
    if len(_totals) >= _TOTALS_LIMIT:
        _totals.clear()  # a burst of distinct counts: start again rather than grow
    _totals[key] = (prices, total)
    return total


def _label(price_provider: str | None, model: str) -> str:
    return f"{price_provider}/{model}" if price_provider else model


def _source(calculation: _Calculation) -> str:
    import genai_prices

    fetched = " (fetched prices)" if calculation.fetched else ""
    return f"genai-prices {genai_prices.__version__}{fetched}"


class _PriceUpdate:
    """The one opt-in refresh of the price data a process makes, in a daemon thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def start_once(self) -> None:
        with self._lock:
            if self.thread is not None:
                return
            self.thread = threading.Thread(target=_refresh_price_data, name="colibri-price-update", daemon=True)
            try:
                self.thread.start()
            except RuntimeError as exc:  # no thread to be had: the bundled data serve
                get_logger(__name__).warning("price data update not started; using bundled prices", error=str(exc))


_price_update = _PriceUpdate()


def _start_price_update_if_opted_in() -> None:
    if (variable(PRICE_UPDATES_VARIABLE) or "").strip().lower() in _OPT_IN_VALUES:
        _price_update.start_once()


def _refresh_price_data() -> None:
    from genai_prices import UpdatePrices, data_snapshot

    try:
        snapshot = UpdatePrices().fetch()
    except Exception as exc:  # whatever went wrong, the bundled data still price every call
        get_logger(__name__).warning(
            "price data update failed; using bundled prices", error=f"{type(exc).__name__}: {exc}"
        )
        return
    if snapshot is not None:
        data_snapshot.set_custom_snapshot(snapshot)
        get_logger(__name__).info("price data updated", providers=len(snapshot.providers))
