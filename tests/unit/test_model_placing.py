"""Which model names reach a provider: every name a rule places does (an alias, a registry name before
the colon, a custom provider's models, a name pattern, a name the catalog lists for a provider, any name
with an explicit provider, the user's own configuration), and a name in a call that nothing places is
INVALID_REQUEST with the close names before anything is sent (router_call's chain, router_ask_many's
models and judge, router_run's scenarios)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_upstream import FakeUpstream, kimi_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri_router.ask_many.schema import RouterAskManyInput
from colibri_router.ask_many.service import ask_many
from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.providers import BUILTIN, load_registry
from colibri_router.providers.aliases import BUILTIN_ALIASES
from colibri_router.providers.placing import UnknownModelError, listed_names
from colibri_router.router import route
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput
from colibri_router.settings import load_settings
from colibri_router.testing import ScenarioError, run_scenario
from colibri_router.testing.router_caller import RouterCaller
from colibri_router.testing.service import run_for_tool
from colibri_router.testing.tool_input import RouterRunInput

HINT = 'a model the router does not know yet is sent by naming its provider, e.g. "kimi:<model>"'


def choose(model: str | None, provider: str | None = None) -> tuple[str, str]:
    choice = load_registry().choose(provider, model, load_settings())
    return choice.provider.name, choice.model


def refused(model: str) -> UnknownModelError:
    with pytest.raises(UnknownModelError) as caught:
        choose(model)
    return caught.value


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("COLIBRI_CONFIG", str(path))
    return path


# --- each kind of name a rule places ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("sonnet", ("claude", "claude-sonnet-4-5")),  # a built-in alias
        ("kimi:anything-at-all", ("kimi", "anything-at-all")),  # a registry name before the colon
        ("ollama:llama3.2:3b", ("ollama", "llama3.2:3b")),  # the rest keeps its own colons
        ("claude-future-9", ("claude", "claude-future-9")),  # a name pattern
        ("gemini-9-ultra", ("gemini", "gemini-9-ultra")),
        ("mistral-tiny-2099", ("mistral", "mistral-tiny-2099")),
        ("moonshotai/Kimi-K9-Instruct", ("kimi", "moonshotai/Kimi-K9-Instruct")),
        ("llama-3.3-70b-versatile", ("groq", "llama-3.3-70b-versatile")),  # listed for groq only
        ("accounts/fireworks/models/deepseek-v3p2", ("fireworks", "accounts/fireworks/models/deepseek-v3p2")),
        ("moonshot-v1-8k", ("kimi", "moonshot-v1-8k")),  # listed for kimi and kimi-anthropic: the default first
    ],
)
def test_each_kind_of_rule_places_a_name(model: str, expected: tuple[str, str]) -> None:
    assert choose(model) == expected


def test_a_listed_name_goes_to_the_default_provider_first_when_it_lists_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose("openai/gpt-oss-120b")[0] == "openrouter"  # listed for openrouter, groq, together: registry order
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "groq")
    assert choose("openai/gpt-oss-120b")[0] == "groq"


def test_an_explicit_provider_takes_any_name(monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose("sonet", provider="kimi") == ("kimi", "sonet")
    assert choose("nope:foo", provider="openrouter") == ("openrouter", "nope:foo")


def test_a_subscription_is_reached_only_by_a_name_that_says_so() -> None:
    # "default" is a model every command-line agent lists, yet no bare name runs the user's login.
    assert choose("codex:default") == ("codex", "default")
    error = refused("default")
    assert "codex:default" in error.suggestions


def test_the_users_configuration_still_reaches_the_default_provider(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file.write_text('[aliases]\nbox = "llama3.2"\ntagged = "qwen3:8b"\n')
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "ollama")
    assert choose("box") == ("ollama", "llama3.2")  # an alias's target: the user wrote it
    assert choose("tagged") == ("ollama", "qwen3:8b")
    monkeypatch.setenv("COLIBRI_DEFAULT_MODEL", "llama3.2")
    assert choose(None) == ("ollama", "llama3.2")  # COLIBRI_DEFAULT_MODEL, as always
    assert load_registry().choose(None, "llama3.2", load_settings(), configured=True).provider.name == "ollama"
    with pytest.raises(UnknownModelError, match=re.escape('e.g. "ollama:<model>"')):
        choose("llama3.2")  # the same name in a call: refused, and the hint names the default provider


def test_a_custom_providers_models_place_their_names(config_file: Path) -> None:
    config_file.write_text(
        '[providers.gpu-box]\nwire = "openai"\nbase_url = "http://gpu-box:8000/v1"\nmodels = ["Acme/Tiny-Coder-7B"]\n'
    )
    assert choose("Acme/Tiny-Coder-7B") == ("gpu-box", "Acme/Tiny-Coder-7B")
    assert choose("gpu-box:whatever") == ("gpu-box", "whatever")
    assert "Acme/Tiny-Coder-7B" in refused("acme/tiny-coder-8b").suggestions  # compared without case


# --- refusals ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "suggested"),
    [("sonet", "sonnet"), ("opuss", "opus"), ("gpt4o", "gpt-4o"), ("claude", "claude:claude-sonnet-4-5")],
)
def test_a_name_no_rule_places_is_refused_with_the_close_names(model: str, suggested: str) -> None:
    error = refused(model)
    assert (error.code, error.kind, error.model) == ("INVALID_REQUEST", "INVALID_REQUEST", model)
    assert suggested in error.suggestions
    assert f"unknown model {model!r}" in error.message and "did you mean: " in error.message
    assert error.message.endswith(HINT)


def test_an_unknown_provider_prefix_lists_the_providers() -> None:
    error = refused("nope:foo")
    assert error.message.startswith(f"unknown provider 'nope' in model 'nope:foo' (providers: {', '.join(BUILTIN)})")
    assert refused("opnai:gpt-5").suggestions[0] == "openai:gpt-5"  # a misspelt provider
    assert refused("llama3.2:3b").message.endswith(HINT)  # a tagged name meant for a provider: name it


def test_the_hint_names_the_default_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "openrouter")
    assert refused("sonet").message.endswith('e.g. "openrouter:<model>"')


# Every name of the catalog, alias and provider the registry has: what a rule places, one sample at a time.
_LISTED = sorted({name for spec in BUILTIN.values() if not spec.subscription for name in listed_names(spec)})
_PATTERNS = ["claude-", "gpt-", "chatgpt-", "o3", "mistral-", "codestral-", "deepseek-", "gemini-", "command-"]
_TEXT = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=24)


@st.composite
def placed_names(draw: st.DrawFn) -> tuple[str, str | None]:
    """A name a rule places, and the provider it must reach (None: whichever lists it)."""
    kind = draw(st.sampled_from(["alias", "prefix", "pattern", "listed"]))
    if kind == "alias":
        alias = draw(st.sampled_from(sorted(BUILTIN_ALIASES)))
        return alias, BUILTIN_ALIASES[alias].partition(":")[0]
    if kind == "prefix":
        return f"{draw(st.sampled_from(sorted(BUILTIN)))}:{draw(_TEXT)}", None
    if kind == "pattern":
        return draw(st.sampled_from(_PATTERNS)) + draw(_TEXT), None
    return draw(st.sampled_from(_LISTED)), None


@given(placed_names())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_name_a_rule_places_resolves(named: tuple[str, str | None]) -> None:
    name, provider = named
    chosen, _ = choose(name)
    if provider is not None:
        assert chosen == provider
    elif ":" in name and name.partition(":")[0] in BUILTIN:
        assert chosen == name.partition(":")[0]


@given(st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=30))
@settings(max_examples=300, deadline=None)
def test_a_name_is_placed_or_refused_with_suggestions_that_are_placed(name: str) -> None:
    outcome: ColibriError | None = None
    try:
        choose(name)
    except ColibriError as error:
        outcome = error
    if isinstance(outcome, UnknownModelError):
        assert outcome.kind == "INVALID_REQUEST" and repr(name) in outcome.message and outcome.message.endswith(HINT)
        for suggestion in outcome.suggestions:
            choose(suggestion)  # every name suggested is one a rule places
    elif outcome is not None:  # "kimi:" and the like, as before
        assert isinstance(outcome, InvalidRequestError) and outcome.message.endswith("but no model after the colon")


@given(st.from_regex(r"zq[a-z0-9]{1,12}(-[a-z0-9]{1,8})?", fullmatch=True))
@settings(max_examples=100, deadline=None)
def test_random_unplaceable_names_are_refused(name: str) -> None:
    with pytest.raises(UnknownModelError) as caught:
        choose(name)
    assert caught.value.name == name


# --- before anything is sent ------------------------------------------------------------------------------


async def routed(seen: list[httpx.Request], **arguments: Any) -> Any:
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda r: seen.append(r) or httpx.Response(500))) as c:
        return (await route(call_from(RouterCallInput.model_validate({"prompt": "hi", **arguments})), client=c)).result


@pytest.mark.parametrize(
    "arguments",
    [
        {"model": "sonet"},
        {"model": "nope:foo"},
        {"model": "sonnet", "fallback": ["gpt-mini", "opuss"]},  # a fallback refused before the first model
    ],
)
async def test_router_call_refuses_an_unplaced_name_in_its_chain_before_sending(
    arguments: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    seen: list[httpx.Request] = []
    with pytest.raises(UnknownModelError) as caught:
        await routed(seen, **arguments)
    assert seen == [] and caught.value.attempts == ()


async def test_every_unplaced_name_of_a_chain_in_one_error_with_the_hint_once() -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(UnknownModelError) as caught:
        await routed(seen, model="sonet", fallback=["opuss"])
    message = caught.value.message
    assert "unknown model 'sonet'" in message and "unknown model 'opuss'" in message
    assert message.count(HINT) == 1 and caught.value.model is None


async def test_the_config_files_fallback_is_trusted(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file.write_text('[fallback]\nmodels = ["my-own-model"]\n')
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-0123456789")
    seen: list[httpx.Request] = []
    with pytest.raises(ColibriError) as caught:
        await routed(seen, model="sonnet")  # both answer 500: the fallback was tried on kimi
    assert [(a["provider"], a["model"]) for a in caught.value.attempts] == [
        ("claude", "claude-sonnet-4-5"),
        ("kimi", "my-own-model"),
    ]


@pytest.fixture
def kimi(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    for name, route_name in {"kimi": "kimi", "claude": "anthropic"}.items():
        spec = BUILTIN[name]
        monkeypatch.setenv(spec.base_url_env, fake_upstream.base_url(route_name))
        monkeypatch.setenv(spec.key_envs[0], f"sk-{name}-test-0123456789")
    return fake_upstream


@pytest.mark.parametrize(
    ("models", "judge", "named"),
    [
        (["sonnet", "kimi"], "opuss", ["opuss"]),  # a bad judge: no model is asked first
        (["sonet", "kimi"], None, ["sonet"]),
        (["sonet", "nope:foo"], "opuss", ["sonet", "nope", "opuss"]),
    ],
)
async def test_ask_many_refuses_unplaced_models_and_judge_before_any_model_is_asked(
    kimi: FakeUpstream, models: list[str], judge: str | None, named: list[str]
) -> None:
    kimi.kimi.enqueue(kimi_text("never sent"))
    arguments = {"prompt": "Is it safe?", "models": models} | ({"judge": judge} if judge else {})
    with pytest.raises(UnknownModelError) as caught:
        await ask_many(RouterAskManyInput.model_validate(arguments))
    assert all(repr(name) in caught.value.message for name in named)
    assert kimi.requests == []


SCENARIO = {
    "colibri": 1,
    "name": "names",
    "models": ["sonnet", "sonet"],
    "turns": [{"user": "hi"}, {"user": "again", "model": "gtp"}],
    "expect": [{"type": "judge", "rubric": "polite", "model": "opuss"}],
}


async def test_router_run_refuses_unplaced_scenario_models_before_any_run(kimi: FakeUpstream) -> None:
    with pytest.raises(ScenarioError) as caught:
        await run_scenario(SCENARIO, caller=RouterCaller())
    paths = [path for path, _ in caught.value.problems]
    assert paths == ["models[1]", "turns[1].model", "expect[0].model", ""]
    assert caught.value.problems[-1][1] == HINT
    with pytest.raises(InvalidRequestError, match=r"(?s)invalid scenario.*did you mean: sonnet"):
        await run_for_tool(RouterRunInput.model_validate({"scenario": SCENARIO}))
    assert kimi.requests == []
