"""The policy file's format (colibri_router.gateway.policy) and its reader's hot reload (.loader)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.errors import ConfigError
from colibri_router.gateway.loader import PolicyFile
from colibri_router.gateway.policy import KEYS, Rules, describe, parse_policy

EXAMPLE = """
[defaults]
tools = ["router_call", "router_models"]
rpm = 60

[members.kim]
models = ["kimi*"]
rpm = 10

[members.ann]
providers = ["claude", "open*"]
files = false
agent_cli = false
max_cost_usd_per_call = 0.5
daily_usd = 5
monthly_usd = 50
tpm = 20000
"""


def test_a_member_gets_the_defaults_with_its_own_keys_on_top() -> None:
    policy = parse_policy(EXAMPLE, "policy.toml")
    kim = policy.rules_for("kim")
    assert kim.rpm == 10 and kim.models == ("kimi*",) and kim.tools == ("router_call", "router_models")
    ann = policy.rules_for("ann")
    assert (ann.files, ann.agent_cli, ann.max_cost_usd_per_call, ann.daily_usd, ann.monthly_usd, ann.tpm) == (
        False,
        False,
        0.5,
        5.0,
        50.0,
        20000,
    )
    assert ann.rpm == 60  # from the defaults
    assert policy.rules_for("nobody") == policy.defaults


def test_model_patterns_match_the_placed_name_or_provider_and_name() -> None:
    rules = Rules(models=("kimi*", "openai:gpt-4o"))
    assert rules.allows_model("kimi", "kimi-k2-0905-preview")
    assert rules.allows_model("openai", "gpt-4o")
    assert not rules.allows_model("openai", "gpt-5.5")
    assert not rules.allows_model("openrouter", "gpt-4o")
    assert not Rules(models=("kimi*",)).allows_model("kimi-anthropic", "other-model")  # a name, not a provider
    assert Rules().allows_model("any", "thing")


def test_provider_and_tool_patterns() -> None:
    rules = Rules(providers=("open*",), tools=("router_call",))
    assert rules.allows_provider("openai") and rules.allows_provider("openrouter")
    assert not rules.allows_provider("kimi")
    assert rules.allows_tool("router_call") and not rules.allows_tool("router_models")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[defaults]\nrmp = 3\n", "[defaults]: unknown key 'rmp'"),
        ("[members.kim]\nrpm = 3\nmodel = ['x']\n", "[members.kim]: unknown key 'model'"),
        ("[member.kim]\nrpm = 3\n", "unknown table 'member'"),
        ("[defaults]\nrpm = 0\n", "rpm must be a whole number, 1 or more"),
        ("[defaults]\ntpm = 1.5\n", "tpm must be a whole number"),
        ("[defaults]\nfiles = 'no'\n", "files must be true or false"),
        ("[defaults]\nmodels = 'kimi*'\n", "models must be a list"),
        ("[defaults]\ndaily_usd = -1\n", "daily_usd must be a number of US dollars"),
        ("[members.'bad name']\nrpm = 1\n", "not a token name"),
        ("[defaults\n", "not valid TOML"),
    ],
)
def test_an_invalid_file_is_an_error_naming_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_policy(text, "policy.toml")
    assert problem in refused.value.message
    assert "policy.toml" in refused.value.message


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20))
def test_every_key_outside_the_documented_ones_is_refused(key: str) -> None:
    text = f"[defaults]\n{key} = 1\n"
    if key in KEYS:
        return
    with pytest.raises(ConfigError, match=f"unknown key '{key}'"):
        parse_policy(text, "p")


def test_describe_leaves_out_open_rules() -> None:
    assert describe(parse_policy(EXAMPLE, "p").rules_for("kim")) == {
        "models": ["kimi*"],
        "tools": ["router_call", "router_models"],
        "rpm": 10,
    }


def _write(path: Path, text: str, stamp: int) -> None:
    path.write_text(text)
    os.utime(path, ns=(stamp, stamp))  # a new modification time whatever the file system's resolution


def test_the_file_is_read_again_when_it_changes_and_a_bad_one_keeps_the_last_good(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "policy.toml"
    _write(path, "[members.kim]\nrpm = 10\n", 1_000_000_000)
    file = PolicyFile(path)
    assert file.policy().rules_for("kim").rpm == 10 and file.problem is None
    _write(path, "[members.kim]\nrpm = 20\n", 2_000_000_000)
    assert file.policy().rules_for("kim").rpm == 20
    _write(path, "[members.kim]\nrpn = 30\n", 3_000_000_000)
    assert file.policy().rules_for("kim").rpm == 20  # the last good policy
    assert file.problem is not None and "unknown key 'rpn'" in file.problem
    _write(path, "[members.kim]\nrpm = 40\n", 4_000_000_000)
    assert file.policy().rules_for("kim").rpm == 40 and file.problem is None


def test_a_file_that_never_parsed_refuses_every_call(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("[defaults]\nrpm = 'many'\n")
    with pytest.raises(ConfigError, match="rpm must be a whole number"):
        PolicyFile(path).policy()
    with pytest.raises(ConfigError, match="cannot be read"):
        PolicyFile(tmp_path / "missing.toml").policy()
