"""Pricing: costs agree with genai-prices' own ``calc_price``, each token kind at its own rate, unknown
models are a null cost with a warning, local servers are free, the price data are bundled (no network
unless opted in, and a failed update keeps them), and importing the module does not load genai-prices."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import genai_prices
import pytest
from genai_prices import UpdatePrices, Usage, data_snapshot
from genai_prices.types import TieredPrices
from hypothesis import given, settings
from hypothesis import strategies as st

from colibri_router import pricing
from colibri_router.logs import configure_logging
from colibri_router.pricing import TokenCounts, known_models, price_call, worst_case_cost

BUNDLED_SOURCE = f"genai-prices {genai_prices.__version__}"

# The default model of each built-in provider, under its genai-prices provider id.
DEFAULT_MODELS = [
    ("moonshotai", "kimi-k2.6"),
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-5.4-mini"),
    ("mistral", "mistral-large-latest"),
    ("google", "gemini-2.5-flash"),
    ("cohere", "command-a-03-2025"),
    ("deepseek", "deepseek-chat"),
    ("openrouter", "moonshotai/kimi-k2"),
]

# Below every long-context tier (the lowest starts at 200k input tokens), so base rates apply.
USAGE_CASES = {
    "plain": TokenCounts(input_tokens=12_000, output_tokens=800),
    "cached": TokenCounts(input_tokens=12_000, output_tokens=800, cached_tokens=9_000),
    "cache_write": TokenCounts(input_tokens=12_000, output_tokens=800, cache_write_tokens=10_000),
    "cached_and_written": TokenCounts(
        input_tokens=30_000, output_tokens=800, cached_tokens=20_000, cache_write_tokens=6_000
    ),
    "reasoning": TokenCounts(input_tokens=12_000, output_tokens=5_000, reasoning_tokens=4_200),
}


@pytest.fixture(autouse=True)
def fresh_price_update(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts as a new process would: no update started, the bundled data in use."""
    monkeypatch.setattr(pricing, "_price_update", pricing._PriceUpdate())
    yield
    started = pricing._price_update.thread
    if started is not None and started.is_alive():
        started.join(timeout=30)
    data_snapshot.set_custom_snapshot(None)


def calc_price_usd(provider: str | None, model: str, usage: Usage) -> float:
    return float(genai_prices.calc_price(usage, model, provider_id=provider).total_price)


def base_rates(provider: str, model: str) -> dict[str, Decimal]:
    """USD per million tokens of each kind, as the bundled data list them; a kind without its own
    price is charged at the plain input (or output) rate."""
    model_price = genai_prices.calc_price(Usage(input_tokens=1), model, provider_id=provider).model_price

    def rate(key: str) -> Decimal | None:
        value = getattr(model_price, key)
        return value.base if isinstance(value, TieredPrices) else value

    input_rate, output_rate = rate("input_mtok"), rate("output_mtok")
    assert input_rate is not None and output_rate is not None
    return {
        "input": input_rate,
        "cache_read": rate("cache_read_mtok") or input_rate,
        "cache_write": rate("cache_write_mtok") or input_rate,
        "output": output_rate,
    }


# --- every default model, against genai-prices itself ---------------------------------------------


@pytest.mark.parametrize(("provider", "model"), DEFAULT_MODELS)
@pytest.mark.parametrize("case", USAGE_CASES)
def test_default_models_cost_what_calc_price_says(provider: str, model: str, case: str) -> None:
    counts = USAGE_CASES[case]
    # genai-prices' input_tokens is the total input, cached and cache-written parts included.
    usage = Usage(
        input_tokens=counts.input_tokens,
        cache_read_tokens=counts.cached_tokens,
        cache_write_tokens=counts.cache_write_tokens,
        output_tokens=counts.output_tokens,
        output_reasoning_tokens=counts.reasoning_tokens,
    )

    price = price_call(provider, model, counts)

    assert price.cost_usd == calc_price_usd(provider, model, usage)
    assert price.source == BUNDLED_SOURCE
    assert price.warning is None


@pytest.mark.parametrize(("provider", "model"), DEFAULT_MODELS)
@pytest.mark.parametrize("case", USAGE_CASES)
def test_each_token_kind_is_charged_at_its_own_rate(provider: str, model: str, case: str) -> None:
    counts = USAGE_CASES[case]
    rates = base_rates(provider, model)
    uncached = counts.input_tokens - counts.cached_tokens - counts.cache_write_tokens
    # Reasoning is part of the output and billed as output: counted once, not on top.
    expected = (
        uncached * rates["input"]
        + counts.cached_tokens * rates["cache_read"]
        + counts.cache_write_tokens * rates["cache_write"]
        + counts.output_tokens * rates["output"]
    ) / 1_000_000

    assert price_call(provider, model, counts).cost_usd == pytest.approx(float(expected), rel=1e-12)


def test_cache_reads_and_writes_change_what_claude_costs() -> None:
    rates = base_rates("anthropic", "claude-sonnet-4-5")
    assert rates["cache_read"] < rates["input"] < rates["cache_write"]
    plain = price_call("anthropic", "claude-sonnet-4-5", TokenCounts(input_tokens=10_000)).cost_usd
    cached = price_call(
        "anthropic", "claude-sonnet-4-5", TokenCounts(input_tokens=10_000, cached_tokens=10_000)
    ).cost_usd
    written = price_call(
        "anthropic", "claude-sonnet-4-5", TokenCounts(input_tokens=10_000, cache_write_tokens=10_000)
    ).cost_usd
    assert cached is not None and plain is not None and written is not None
    assert cached < plain < written


def test_a_model_without_a_cache_rate_charges_cached_tokens_as_input() -> None:
    assert (
        base_rates("mistral", "mistral-large-latest")["cache_read"]
        == base_rates("mistral", "mistral-large-latest")["input"]
    )
    plain = price_call("mistral", "mistral-large-latest", TokenCounts(input_tokens=5_000))
    cached = price_call("mistral", "mistral-large-latest", TokenCounts(input_tokens=5_000, cached_tokens=4_000))
    assert cached.cost_usd == plain.cost_usd


# --- model names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "served_as", "priced_as"),
    [
        # genai-prices picks the provider from the model name, then the prefix is dropped.
        (None, "moonshotai/kimi-k2", ("moonshotai", "kimi-k2")),
        (None, "openai/gpt-5.4-mini", ("openai", "gpt-5.4-mini")),
        (None, "google/gemini-2.5-flash", ("google", "gemini-2.5-flash")),
        (None, "deepseek/deepseek-chat", ("deepseek", "deepseek-chat")),
        (None, "kimi-k2.6", ("moonshotai", "kimi-k2.6")),
        (None, "claude-sonnet-4-5-20250929", ("anthropic", "claude-sonnet-4-5")),
        (None, "accounts/fireworks/models/kimi-k2p6", ("fireworks", "accounts/fireworks/models/kimi-k2p6")),
        # Hosts that list the prefixed name keep their own price for it.
        ("openrouter", "moonshotai/kimi-k2", ("openrouter", "moonshotai/kimi-k2")),
        ("groq", "moonshotai/kimi-k2-instruct", ("groq", "moonshotai/kimi-k2-instruct")),
        ("fireworks", "accounts/fireworks/models/kimi-k2p6", ("fireworks", "accounts/fireworks/models/kimi-k2p6")),
        ("moonshotai", "Kimi-K2.6", ("moonshotai", "kimi-k2.6")),
    ],
)
def test_models_served_under_prefixes_are_found(
    provider: str | None, served_as: str, priced_as: tuple[str, str]
) -> None:
    counts = TokenCounts(input_tokens=3_000, output_tokens=400, cached_tokens=1_000)
    usage = Usage(input_tokens=3_000, output_tokens=400, cache_read_tokens=1_000, output_reasoning_tokens=0)

    price = price_call(provider, served_as, counts)

    assert price.cost_usd == calc_price_usd(*priced_as, usage)
    assert price.warning is None


def test_a_prefix_never_borrows_another_hosts_price() -> None:
    # Together does not list kimi-k2; Moonshot's own price would be a guess about Together's bill.
    price = price_call("together", "moonshotai/kimi-k2", TokenCounts(input_tokens=10))
    assert price.cost_usd is None


# --- unknown, local, inconsistent --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model", "warning"),
    [
        ("openai", "gpt-nonexistent-9", "no price known for openai/gpt-nonexistent-9; cost_usd is null"),
        ("no-such-host", "kimi-k2.6", "no price known for no-such-host/kimi-k2.6; cost_usd is null"),
        (None, "llama-from-nowhere", "no price known for llama-from-nowhere; cost_usd is null"),
    ],
)
def test_an_unknown_price_is_null_with_a_warning(provider: str | None, model: str, warning: str) -> None:
    price = price_call(provider, model, TokenCounts(input_tokens=100, output_tokens=10))
    assert price == pricing.Price(cost_usd=None, source=None, warning=warning)
    assert worst_case_cost(provider, model, 100, 10) is None


@settings(max_examples=60, deadline=None)
@given(provider=st.sampled_from([None, "openai", "openrouter", "fireworks"]), model=st.text(max_size=40))
def test_no_model_name_makes_pricing_raise(provider: str | None, model: str) -> None:
    price = price_call(provider, model, TokenCounts(input_tokens=10, output_tokens=10, cached_tokens=5))
    assert (price.cost_usd is None) == (price.warning is not None)
    assert price.cost_usd is None or price.cost_usd >= 0


@pytest.mark.parametrize("model", ["llama3.3:70b", "kimi-k2.6", "anything at all"])
def test_local_servers_cost_nothing(model: str) -> None:
    counts = TokenCounts(input_tokens=50_000, output_tokens=9_000, cached_tokens=1_000)
    assert price_call(None, model, counts, local=True) == pricing.Price(cost_usd=0.0, source="local", warning=None)
    assert worst_case_cost("moonshotai", model, 50_000, 9_000, local=True) == 0.0


def test_counts_that_contradict_themselves_are_priced_with_a_warning() -> None:
    claimed = TokenCounts(input_tokens=1_000, output_tokens=10, cached_tokens=3_000, reasoning_tokens=40)
    consistent = TokenCounts(input_tokens=3_000, output_tokens=40, cached_tokens=3_000, reasoning_tokens=40)

    price = price_call("anthropic", "claude-sonnet-4-5", claimed)

    assert price.cost_usd == price_call("anthropic", "claude-sonnet-4-5", consistent).cost_usd
    assert price.warning is not None
    assert "(3000) exceed input tokens (1000)" in price.warning
    assert "reasoning tokens (40) exceed output tokens (10)" in price.warning


@pytest.mark.parametrize(
    "field", ["input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens"]
)
def test_negative_token_counts_are_refused(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        TokenCounts(**{field: -1})


def test_price_data_that_cannot_be_applied_is_a_null_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    def unusable(*_: object, **__: object) -> None:
        raise ValueError("Missing ancestor price for cache_read_tokens: input_tokens")

    # Where genai-prices applies the prices to the usage (the step colibri-router caches: emptied here).
    monkeypatch.setattr(genai_prices.types.ModelPrice, "calc_price", unusable)
    monkeypatch.setattr(pricing, "_totals", {})
    price = price_call("openai", "gpt-5.4-mini", TokenCounts(input_tokens=10))
    assert price.cost_usd is None
    assert price.warning == (
        "price data for openai/gpt-5.4-mini is unusable (Missing ancestor price for cache_read_tokens: "
        "input_tokens); cost_usd is null"
    )


# --- properties ----------------------------------------------------------------------------------------

PARTS = ("uncached", "cached", "written", "visible_output", "reasoning")
part_counts = st.integers(min_value=0, max_value=1_500_000)


def counts_from_parts(parts: dict[str, int]) -> TokenCounts:
    return TokenCounts(
        input_tokens=parts["uncached"] + parts["cached"] + parts["written"],
        output_tokens=parts["visible_output"] + parts["reasoning"],
        cached_tokens=parts["cached"],
        cache_write_tokens=parts["written"],
        reasoning_tokens=parts["reasoning"],
    )


@settings(max_examples=200, deadline=None)
@given(
    provider_model=st.sampled_from(DEFAULT_MODELS),
    parts=st.fixed_dictionaries(dict.fromkeys(PARTS, part_counts)),
    grown=st.sampled_from(PARTS),
    more=st.integers(min_value=1, max_value=1_000_000),
)
def test_cost_never_falls_when_any_kind_of_token_is_added(
    provider_model: tuple[str, str], parts: dict[str, int], grown: str, more: int
) -> None:
    # Tokens are added, not relabelled: one more cached token is one more input token too. (Turning
    # an uncached token into a cached one rightly costs less.) Long-context tiers are in range.
    before = price_call(*provider_model, counts_from_parts(parts)).cost_usd
    after = price_call(*provider_model, counts_from_parts({**parts, grown: parts[grown] + more})).cost_usd
    assert before is not None and after is not None
    assert 0 <= before <= after


@settings(max_examples=150, deadline=None)
@given(
    provider_model=st.sampled_from(DEFAULT_MODELS),
    input_tokens=st.integers(min_value=0, max_value=1_500_000),
    max_output=st.integers(min_value=0, max_value=200_000),
    data=st.data(),
)
def test_worst_case_bounds_every_call_within_its_limits(
    provider_model: tuple[str, str], input_tokens: int, max_output: int, data: st.DataObject
) -> None:
    cached = data.draw(st.integers(min_value=0, max_value=input_tokens))
    written = data.draw(st.integers(min_value=0, max_value=input_tokens - cached))
    output = data.draw(st.integers(min_value=0, max_value=max_output))
    reasoning = data.draw(st.integers(min_value=0, max_value=output))
    counts = TokenCounts(input_tokens, output, cached, written, reasoning)

    worst = worst_case_cost(*provider_model, input_tokens, max_output)
    actual = price_call(*provider_model, counts).cost_usd

    assert worst is not None and actual is not None
    assert actual <= worst


# --- worst case -----------------------------------------------------------------------------------------


def test_worst_case_is_input_and_output_at_full_rates() -> None:
    # Kimi K2.6 has no cache-write price, so the plain input rate is the dearest input rate.
    expected = calc_price_usd("moonshotai", "kimi-k2.6", Usage(input_tokens=120_000, output_tokens=8_000))
    assert worst_case_cost("moonshotai", "kimi-k2.6", 120_000, 8_000) == expected


def test_worst_case_uses_the_cache_write_rate_where_it_is_dearer() -> None:
    plain = calc_price_usd("anthropic", "claude-sonnet-4-5", Usage(input_tokens=120_000, output_tokens=8_000))
    all_written = calc_price_usd(
        "anthropic",
        "claude-sonnet-4-5",
        Usage(input_tokens=120_000, cache_write_tokens=120_000, output_tokens=8_000),
    )
    assert all_written > plain
    assert worst_case_cost("anthropic", "claude-sonnet-4-5", 120_000, 8_000) == all_written


# --- known models -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("moonshotai", "kimi-k2.6"),
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "gpt-5.4-mini"),
        ("openrouter", "moonshotai/kimi-k2"),
        ("fireworks", "accounts/fireworks/models/kimi-k2p6"),
        ("groq", "moonshotai/kimi-k2-instruct"),
    ],
)
def test_known_models_lists_names_a_call_can_use(provider: str, name: str) -> None:
    assert name in known_models(provider)


def test_known_models_gives_the_callable_name_not_a_catalogue_id() -> None:
    # genai-prices files the model as "kimi-k2p6", but Fireworks serves it under its account path.
    assert "kimi-k2p6" not in known_models("fireworks")


@pytest.mark.parametrize(
    "provider", ["moonshotai", "anthropic", "openai", "mistral", "google", "cohere", "deepseek", "fireworks"]
)
def test_every_known_model_is_priced(provider: str) -> None:
    names = known_models(provider)
    assert names == sorted(set(names))
    assert names
    for name in names:
        assert price_call(provider, name, TokenCounts(input_tokens=1)).warning is None, name


def test_an_unknown_provider_knows_no_models() -> None:
    assert known_models("no-such-host") == []


# --- price data: bundled, updates only when asked ------------------------------------------------------


def test_no_update_is_attempted_without_the_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    fetches: list[UpdatePrices] = []
    monkeypatch.setattr(UpdatePrices, "fetch", fetches.append)

    for provider, model in DEFAULT_MODELS:
        assert price_call(provider, model, TokenCounts(input_tokens=10)).source == BUNDLED_SOURCE
        worst_case_cost(provider, model, 10, 10)

    assert pricing._price_update.thread is None
    assert fetches == []


@pytest.mark.parametrize("value", ["0", "false", "no", ""])
def test_only_a_true_value_opts_in(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setattr(UpdatePrices, "fetch", lambda self: pytest.fail("the price data were fetched"))
    monkeypatch.setenv("COLIBRI_PRICE_UPDATES", value)
    price_call("openai", "gpt-5.4-mini", TokenCounts(input_tokens=10))
    assert pricing._price_update.thread is None


def test_an_opted_in_update_runs_once_in_the_background_without_holding_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fetched = data_snapshot.DataSnapshot(providers=data_snapshot.get_snapshot().providers, from_auto_update=True)
    release = threading.Event()
    fetches: list[object] = []

    def slow_fetch(self: UpdatePrices) -> data_snapshot.DataSnapshot:
        fetches.append(self)
        release.wait(timeout=30)  # a call that waited for this would come back with fetched prices
        return fetched

    monkeypatch.setattr(UpdatePrices, "fetch", slow_fetch)
    monkeypatch.setenv("COLIBRI_PRICE_UPDATES", "1")
    counts = TokenCounts(input_tokens=2_000, output_tokens=100)

    while_fetching = [price_call(provider, model, counts) for provider, model in DEFAULT_MODELS]
    release.set()
    assert pricing._price_update.thread is not None
    pricing._price_update.thread.join(timeout=30)
    after = price_call("moonshotai", "kimi-k2.6", counts)

    assert {price.source for price in while_fetching} == {BUNDLED_SOURCE}
    assert after.source == f"{BUNDLED_SOURCE} (fetched prices)"
    assert after.cost_usd == while_fetching[0].cost_usd
    assert len(fetches) == 1


def test_a_failed_update_keeps_the_bundled_data_and_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_fetch(self: UpdatePrices) -> None:
        raise OSError("refused to resolve raw.githubusercontent.com")

    monkeypatch.setattr(UpdatePrices, "fetch", failing_fetch)
    monkeypatch.setenv("COLIBRI_PRICE_UPDATES", "1")
    stream = io.StringIO()
    configure_logging("info", stream)
    counts = TokenCounts(input_tokens=2_000, output_tokens=100, cached_tokens=500)

    first = price_call("deepseek", "deepseek-chat", counts)
    assert pricing._price_update.thread is not None
    pricing._price_update.thread.join(timeout=30)
    second = price_call("deepseek", "deepseek-chat", counts)

    assert first == second
    assert second.source == BUNDLED_SOURCE and second.cost_usd is not None
    assert not data_snapshot.get_snapshot().from_auto_update
    warnings = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["level"], line["event"], line["error"]) for line in warnings] == [
        (
            "warning",
            "price data update failed; using bundled prices",
            "OSError: refused to resolve raw.githubusercontent.com",
        )
    ]


def test_an_update_that_cannot_start_never_fails_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoThreads(threading.Thread):
        def start(self) -> None:
            raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading, "Thread", NoThreads)
    monkeypatch.setenv("COLIBRI_PRICE_UPDATES", "1")
    stream = io.StringIO()
    configure_logging("info", stream)

    price = price_call("openai", "gpt-5.4-mini", TokenCounts(input_tokens=10))
    price_call("openai", "gpt-5.4-mini", TokenCounts(input_tokens=10))

    assert price.source == BUNDLED_SOURCE
    assert [json.loads(line)["event"] for line in stream.getvalue().splitlines()] == [
        "price data update not started; using bundled prices"
    ]


# --- import cost ----------------------------------------------------------------------------------------


def test_importing_pricing_does_not_load_genai_prices() -> None:
    probe = "import sys, colibri_router.pricing; print('genai_prices' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


# --- the cached price equals genai-prices' own calc_price (issue 22: calc_price on every call) ----------

PRICED_MODELS = [
    ("moonshotai", "kimi-k2-0905-preview"),
    ("openai", "gpt-5.4-mini"),
    ("anthropic", "claude-sonnet-4-5"),
    ("google", "gemini-2.5-pro"),  # tiered: its rates change above 200k input tokens
    ("deepseek", "deepseek-chat"),
    (None, "gpt-4o"),
    ("openrouter", "moonshotai/kimi-k2"),
    ("openai", "no-such-model"),
    ("groq", "whisper-large-v3"),  # genai-prices adjusts its usage's audio seconds: tokens have none
]


def _uncached(price_provider: str | None, model: str, counts: TokenCounts) -> float | None:
    usage = pricing._prices_usage(counts)
    for reference in (model, model.rsplit("/", 1)[-1]):
        try:
            return float(genai_prices.calc_price(usage, reference, provider_id=price_provider).total_price)
        except LookupError:
            continue
    return None


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(PRICED_MODELS),
    st.fixed_dictionaries({part: st.sampled_from([0, 1, 7, 1000, 199_999, 200_001, 1_500_000]) for part in PARTS}),
    st.integers(min_value=1, max_value=3),
)
def test_the_cached_price_is_genai_prices_own(
    priced: tuple[str | None, str], parts: dict[str, int], repeats: int
) -> None:
    price_provider, model = priced
    counts = counts_from_parts(parts)
    expected = _uncached(price_provider, model, counts)
    for _ in range(repeats):  # the first computes, the next come from the cache: all the same
        assert price_call(price_provider, model, counts).cost_usd == expected


def test_new_price_data_is_used_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = TokenCounts(input_tokens=1000, output_tokens=100)
    before = price_call("openai", "gpt-5.4-mini", counts).cost_usd
    assert before is not None and before > 0
    snapshot = data_snapshot.get_snapshot()
    _, info = snapshot.find_provider_model("gpt-5.4-mini", None, "openai", None)
    doubled = copy.copy(info.get_prices(datetime.now(tz=UTC)))
    doubled.input_mtok = Decimal(doubled.input_mtok) * 2  # type: ignore[operator]
    original = type(info).get_prices
    monkeypatch.setattr(type(info), "get_prices", lambda self, *a: doubled if self is info else original(self, *a))

    after = price_call("openai", "gpt-5.4-mini", counts).cost_usd

    assert after == _uncached("openai", "gpt-5.4-mini", counts) != before
