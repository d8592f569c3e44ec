"""The registry: built-in entries, model profiles, the choosing rules, the config file, connections."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri_router.errors import (
    ApiError,
    ConfigError,
    DeadlineError,
    InvalidRequestError,
    KimiConfigError,
    error_family,
)
from colibri_router.providers import BUILTIN, configured, connect, is_kimi_model, load_registry, profile_for
from colibri_router.providers.profiles import is_kimi_reasoning_model
from colibri_router.providers.spec import error_prefix
from colibri_router.settings import load_settings

# --- model profiles -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "kimi-k2-0711-preview",
        "kimi-k2.6",
        "kimi-k3",
        "K2-Thinking",
        "kimi-latest",
        "kimi-thinking-preview",
        "moonshotai/Kimi-K2-Instruct",
        "~moonshotai/kimi-latest",
        "Pro/moonshotai/Kimi-K2.5",
        "accounts/fireworks/models/kimi-k2p6",
        "accounts/fireworks/routers/kimi-k2p7-code-fast",
        "moonshot.kimi-k2-thinking",
        "kimi-k2:1t-cloud",
    ],
)
def test_kimi_names_on_every_host(model: str) -> None:
    assert is_kimi_model(model)
    assert profile_for(model).ids == "k2"


@pytest.mark.parametrize("model", ["gpt-4o", "qwen3-coder-plus", "claude-sonnet-4-5", "kimichat", "mistral-large"])
def test_names_that_are_not_kimi(model: str) -> None:
    assert not is_kimi_model(model)


@pytest.mark.parametrize(
    ("model", "reasons"),
    [
        ("kimi-k2-0905-preview", False),
        ("moonshotai/Kimi-K2-Instruct-0905", False),
        ("kimi-k2-thinking", True),
        ("moonshotai/Kimi-K2.5", True),
        ("accounts/fireworks/models/kimi-k2p5", True),
        ("kimi-k2-5", True),
        ("kimi-k2.6", True),
        ("kimi-k2p7-code", True),
        ("kimi-k3", True),
    ],
)
def test_kimi_reasoning_models_from_k2_5_on(model: str, reasons: bool) -> None:
    assert is_kimi_reasoning_model(model) is reasons
    assert profile_for(model).replays_reasoning is reasons


def test_the_kimi_profile_carries_every_kimi_rule() -> None:
    profile = profile_for("moonshotai/kimi-k2.6")
    assert (profile.forced_tool_choice, profile.parses_markers, profile.max_temperature, profile.max_tools) == (
        False,
        True,
        1.0,
        128,
    )


@pytest.mark.parametrize("model", ["o3", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5.4-mini", "openai/gpt-5.5", "o1"])
def test_openai_reasoning_models_take_no_sampling_parameters(model: str) -> None:
    profile = profile_for(model)
    assert (profile.sampling, profile.max_tokens_field) == (False, "max_completion_tokens")


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4.1-mini", "gpt-5-chat-latest"])
def test_other_openai_models_keep_sampling(model: str) -> None:
    assert profile_for(model).sampling


@pytest.mark.parametrize(
    "model",
    ["mistral-large-latest", "codestral-2508", "open-mixtral-8x22b", "mistralai/Mistral-Small-3.2-24B-Instruct"],
)
def test_mistral_models_need_nine_character_ids_on_any_host(model: str) -> None:
    assert profile_for(model).ids == "mistral9"


# --- the built-in table --------------------------------------------------------------------------------


def test_built_in_names_wires_and_variables() -> None:
    table = {name: (spec.wire, spec.key_envs, spec.base_url_env, spec.base_url) for name, spec in BUILTIN.items()}
    assert table["kimi"] == ("openai", ("COLIBRI_KIMI_API_KEY",), "COLIBRI_KIMI_BASE_URL", "https://api.moonshot.ai/v1")
    assert table["claude"] == ("anthropic", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    assert table["kimi-anthropic"][0] == "anthropic"
    assert table["kimi-anthropic"][2:] == ("COLIBRI_KIMI_ANTHROPIC_BASE_URL", "https://api.moonshot.ai/anthropic")
    assert table["openai"][3] == "https://api.openai.com/v1"
    assert table["groq"][3] == "https://api.groq.com/openai/v1"
    assert table["fireworks"][3] == "https://api.fireworks.ai/inference/v1"
    assert table["vllm"][1:] == (("VLLM_API_KEY",), "VLLM_BASE_URL", "http://localhost:8000/v1")
    assert table["lmstudio"][1:] == ((), "LMSTUDIO_BASE_URL", "http://127.0.0.1:1234/v1")
    assert BUILTIN["kimi"].default_model == "kimi-k2.6"
    assert BUILTIN["vllm"].default_model is None
    assert BUILTIN["lmstudio"].default_model is None


@pytest.mark.parametrize(
    ("name", "prefix"),
    [("kimi", "KIMI"), ("claude", "ANTHROPIC"), ("openai", "OPENAI"), ("kimi-anthropic", "KIMI_ANTHROPIC")],
)
def test_error_prefixes(name: str, prefix: str) -> None:
    assert BUILTIN[name].error_prefix == prefix
    assert error_family(prefix).api("x").code == f"{prefix}_API_ERROR"


def test_custom_names_get_their_own_error_codes() -> None:
    assert error_prefix("gpu-box") == "GPU_BOX"
    family = error_family("GPU_BOX")
    assert family.config("x").code == "GPU_BOX_CONFIG_ERROR"
    assert family.timeout("x").code == "GPU_BOX_TIMEOUT"
    assert family.api("x", exhausted=True).code == "GPU_BOX_RETRIES_EXHAUSTED"
    assert error_family("GPU_BOX") is family
    # the provider is data on the condition's class, not a class of its own
    assert (type(family.config("x")), type(family.api("x")), type(family.timeout("x"))) == (
        ConfigError,
        ApiError,
        DeadlineError,
    )
    assert family.api("x").prefix == "GPU_BOX"
    assert error_family("OPENAI").api("x").code != family.api("x").code


# --- choosing the provider -----------------------------------------------------------------------------


def choose(provider: str | None, model: str | None) -> tuple[str, str]:
    choice = load_registry().choose(provider, model, load_settings())
    return choice.provider.name, choice.model


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        (None, "openrouter:moonshotai/kimi-k2", ("openrouter", "moonshotai/kimi-k2")),
        (None, "vllm:moonshotai/Kimi-K2-Instruct", ("vllm", "moonshotai/Kimi-K2-Instruct")),
        (None, "moonshotai/kimi-k2:free", ("kimi", "moonshotai/kimi-k2:free")),
        (None, "claude-opus-4-1", ("claude", "claude-opus-4-1")),
        (None, "gpt-5.4-mini", ("openai", "gpt-5.4-mini")),
        (None, "chatgpt-4o-latest", ("openai", "chatgpt-4o-latest")),
        (None, "o3-mini", ("openai", "o3-mini")),
        (None, "codestral-latest", ("mistral", "codestral-latest")),
        (None, "deepseek-chat", ("deepseek", "deepseek-chat")),
        (None, "K2-Thinking", ("kimi", "K2-Thinking")),
        (None, "llama-3.3-70b-versatile", ("groq", "llama-3.3-70b-versatile")),  # listed for groq only
        (None, "moonshot-v1-8k", ("kimi", "moonshot-v1-8k")),  # listed for kimi, the default, first
        (None, None, ("kimi", "kimi-k2.6")),
        ("claude", None, ("claude", "claude-sonnet-4-5")),
        ("claude", "kimi-k2", ("claude", "kimi-k2")),
        ("openrouter", "openrouter:openai/gpt-5.5", ("openrouter", "openai/gpt-5.5")),
    ],
)
def test_choosing_rules(provider: str | None, model: str | None, expected: tuple[str, str]) -> None:
    assert choose(provider, model) == expected


def test_default_provider_and_model_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "openai")
    with pytest.raises(InvalidRequestError, match='"openai:<model>"'):
        choose(None, "unknown-name")  # a name in a call that no rule places is refused (test_model_placing.py)
    assert choose(None, None) == ("openai", "gpt-5.4-mini")
    monkeypatch.setenv("COLIBRI_DEFAULT_MODEL", "claude-haiku-4-5")
    assert choose(None, None) == ("claude", "claude-haiku-4-5")  # placed by the rules like any model
    monkeypatch.setenv("COLIBRI_DEFAULT_MODEL", "unknown-name")
    assert choose(None, None) == ("openai", "unknown-name")  # the user's own setting: the default provider


def test_an_unknown_default_provider_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "nope")
    with pytest.raises(ConfigError, match="COLIBRI_DEFAULT_PROVIDER is 'nope'"):
        choose(None, None)


def test_local_providers_need_a_model() -> None:
    with pytest.raises(InvalidRequestError, match="'vllm' has no default model"):
        choose("vllm", None)


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(InvalidRequestError, match="unknown provider 'nope'; known: kimi, claude"):
        choose("nope", None)


# --- the config file -----------------------------------------------------------------------------------


GPU_BOX = """
[providers.gpu-box]
wire = "openai"
base_url = "http://gpu-box:8000/v1/"
api_key_env = "GPU_BOX_KEY"
default_model = "moonshotai/Kimi-K2-Instruct"
models = ["moonshotai/Kimi-K2-Instruct", "Qwen/Qwen3-Coder"]
headers = { "X-Title" = "colibri" }
"""


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("COLIBRI_CONFIG", str(path))
    return path


def test_a_custom_provider_is_a_registry_entry(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file.write_text(GPU_BOX)
    spec = load_registry().get("gpu-box")
    assert (spec.wire, spec.base_url, spec.headers, spec.error_prefix) == (
        "openai",
        "http://gpu-box:8000/v1",
        {"X-Title": "colibri"},
        "GPU_BOX",
    )
    assert choose(None, "Qwen/Qwen3-Coder") == ("gpu-box", "Qwen/Qwen3-Coder")
    assert choose(None, "gpu-box:other") == ("gpu-box", "other")
    with pytest.raises(ConfigError) as missing:
        connect(spec)
    assert missing.value.code == "GPU_BOX_CONFIG_ERROR"
    monkeypatch.setenv("GPU_BOX_KEY", "secret-1234")
    assert connect(spec).api_key == "secret-1234"


def test_the_config_file_is_read_again_when_it_changes(config_file: Path) -> None:
    config_file.write_text(GPU_BOX)
    assert "gpu-box" in load_registry().providers
    config_file.write_text(GPU_BOX.replace("gpu-box", "gpu-two") + "\n# longer now\n")
    assert set(load_registry().providers) - set(BUILTIN) == {"gpu-two"}


def test_the_xdg_config_file_is_read_when_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert set(load_registry().providers) == set(BUILTIN)  # absent: no error
    (tmp_path / "colibri-router").mkdir()
    (tmp_path / "colibri-router" / "config.toml").write_text(GPU_BOX)
    assert "gpu-box" in load_registry().providers


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[providers.kimi]\nwire='openai'\nbase_url='http://x'", "'kimi' is a built-in provider"),
        ("[providers.box]\nwire='soap'\nbase_url='http://x'", "wire must be one of"),
        ("[providers.box]\nwire='openai'", "base_url must be a non-empty string"),
        ("[providers.box]\nwire='openai'\nbase_url='ftp://x'", "base_url must be an http"),
        ("[providers.box]\nwire='openai'\nbase_url='http://x'\napi_key='sk-abc'", "unknown key(s) api_key"),
        ("[providers.box]\nwire='openai'\nbase_url='http://x'\napi_key_env='sk-abc-123'", "NAME of an environment"),
        ("[providers.box]\nwire='openai'\nbase_url='http://x'\nmodels='m'", "models must be a list"),
        ("[providers.box]\nwire='openai'\nbase_url='http://x'\ntools='no'", "tools must be true or false"),
        ("[providers.Box]\nwire='openai'\nbase_url='http://x'", "the name must be lower-case"),
        ("[aliasez]\nx='y'", "unknown table(s) aliasez"),
        ("[providers.box\n", "is not valid TOML"),
    ],
)
def test_a_malformed_config_is_a_config_error_naming_file_entry_and_problem(
    config_file: Path, text: str, problem: str
) -> None:
    config_file.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_registry()
    assert str(config_file) in caught.value.message
    assert problem in caught.value.message
    assert "sk-abc" not in caught.value.message or "api_key_env" in problem


def test_a_missing_colibri_config_is_a_config_error(config_file: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_registry()


# --- connections -----------------------------------------------------------------------------------------


def test_keys_and_urls_are_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KimiConfigError, match="set COLIBRI_KIMI_API_KEY"):
        connect(BUILTIN["kimi"])
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "k-1")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", "http://127.0.0.1:9/v1/")
    assert connect(BUILTIN["kimi"]) == connect(BUILTIN["kimi"], "k-1", "http://127.0.0.1:9/v1")
    assert "k-1" not in repr(connect(BUILTIN["kimi"]))


def test_local_servers_need_no_key_and_count_as_configured_by_their_url(monkeypatch: pytest.MonkeyPatch) -> None:
    assert connect(BUILTIN["lmstudio"]).api_key is None
    assert not configured(BUILTIN["lmstudio"])
    monkeypatch.setenv("LMSTUDIO_BASE_URL", "http://127.0.0.1:1234/v1")
    assert configured(BUILTIN["lmstudio"])
    monkeypatch.setenv("VLLM_API_KEY", "optional")
    assert connect(BUILTIN["vllm"]).api_key == "optional"
    assert not configured(BUILTIN["openai"])
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert configured(BUILTIN["openai"])


def test_supports_tools_is_answered_by_the_registry(config_file: Path) -> None:
    from colibri_router.adapters import supports_tools

    config_file.write_text(
        '[providers.plain]\nwire = "openai"\nbase_url = "http://x/v1"\nmodels = ["tiny"]\ntools = false\n'
    )
    assert supports_tools("gemini-3.5-flash")
    assert supports_tools("moonshotai/kimi-k2", provider="openrouter")
    assert not supports_tools("tiny")
