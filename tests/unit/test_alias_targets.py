"""router_models' ``aliases`` map: every value is ``<provider>:<model>``, resolved by the choosing
rules, even for a user alias written as a bare model name (issue 21 §5)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri_router.catalog.schema import RouterModelsInput
from colibri_router.catalog.service import list_models
from colibri_router.providers import load_registry
from colibri_router.settings import load_settings

FILES = itertools.count()
CONFIG = """\
[providers.gpu-box]
wire = "openai"
base_url = "http://127.0.0.1:9/v1"
default_model = "Qwen/Qwen3-Coder"
models = ["Qwen/Qwen3-Coder"]

[aliases]
mine = "kimi-k2-turbo-preview"
writer = "claude-sonnet-4-5"
box = "Qwen/Qwen3-Coder"
odd = "my-own-finetune"
full = "openai:gpt-4.1"
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    monkeypatch.setenv("COLIBRI_CONFIG", str(path))
    return path


async def test_a_bare_alias_is_shown_as_the_provider_and_model_it_resolves_to(config: Path) -> None:
    aliases = (await list_models(RouterModelsInput())).aliases

    assert aliases["mine"] == "kimi:kimi-k2-turbo-preview"
    assert aliases["writer"] == "claude:claude-sonnet-4-5"
    assert aliases["box"] == "gpu-box:Qwen/Qwen3-Coder"
    assert aliases["odd"] == "kimi:my-own-finetune"  # no rule claims it: the default provider
    assert aliases["full"] == "openai:gpt-4.1"
    assert aliases["sonnet"] == "claude:claude-sonnet-4-5"


async def test_the_default_provider_setting_places_an_unclaimed_bare_alias(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "openai")

    assert (await list_models(RouterModelsInput())).aliases["odd"] == "openai:my-own-finetune"


async def test_a_bare_alias_is_listed_under_its_provider(config: Path) -> None:
    result = await list_models(RouterModelsInput(provider="kimi"))

    assert result.aliases["mine"] == "kimi:kimi-k2-turbo-preview"
    assert "writer" not in result.aliases
    assert "my-own-finetune" in result.providers[0].models


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    target=st.from_regex(r"[a-z][a-z0-9.\-]{0,20}(:[a-zA-Z0-9.\-/]{1,20})?", fullmatch=True),
)
async def test_every_value_names_a_provider_and_chooses_like_the_alias(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    path = tmp_path / f"config-{next(FILES)}.toml"  # a new file each time: the parse is cached on the stat
    path.write_text(f'[aliases]\nmine = "{target}"\n')
    monkeypatch.setenv("COLIBRI_CONFIG", str(path))
    registry = load_registry()
    choice = registry.choose(None, "mine", load_settings())

    aliases = (await list_models(RouterModelsInput())).aliases

    provider, colon, model = aliases["mine"].partition(":")
    assert colon and provider in registry.providers
    assert (provider, model) == (choice.provider.name, choice.model)
