"""Per-call look-ups cached on their inputs (issue 22's per-call CPU): the config file's path and the
local user's name give the same answer as computing them afresh, for any environment, and a changed
variable is seen on the very next call."""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.callers import local_principal
from colibri_router.providers.config import config_path

PATH_NAMES = ["COLIBRI_CONFIG", "XDG_CONFIG_HOME", "HOME"]
LOGIN_NAMES = ["LOGNAME", "USER", "LNAME", "USERNAME"]
# Path-like values, "~" included (COLIBRI_CONFIG is expanded), and the empty value (treated as unset).
PATHS = st.sampled_from(["", "/srv/a", "/srv/b/", "~/conf.toml", "relative/dir", "/tmp/ü"])
LOGINS = st.sampled_from(["", "alice", "bob", "svc-router", "ünï"])


def _uncached_config_path() -> Path:
    configured = os.environ.get("COLIBRI_CONFIG")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "colibri-router" / "config.toml"


def _uncached_principal() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "local"


# HOME as a service manager sets it (absolute); "~" in it would make Path.home() itself fail.
HOMES = st.sampled_from(["", "/home/a", "/root", "/srv/ü/"])
PATH_ENVIRONMENTS = st.fixed_dictionaries(
    {}, optional={"COLIBRI_CONFIG": PATHS, "XDG_CONFIG_HOME": PATHS, "HOME": HOMES}
)


@given(st.lists(PATH_ENVIRONMENTS, min_size=1, max_size=4))
def test_config_path_is_what_the_environment_says_now(environments: list[dict[str, str]]) -> None:
    for assigned in environments:  # one after another: a cached answer must never outlive its inputs
        with pytest.MonkeyPatch.context() as patch:
            _only(patch, PATH_NAMES, assigned)

            assert config_path() == _uncached_config_path()


@given(st.lists(st.dictionaries(st.sampled_from(LOGIN_NAMES), LOGINS), min_size=1, max_size=4))
def test_local_principal_is_what_getpass_says_now(environments: list[dict[str, str]]) -> None:
    for assigned in environments:
        with pytest.MonkeyPatch.context() as patch:
            _only(patch, LOGIN_NAMES, assigned)

            assert local_principal() == _uncached_principal()


def test_a_changed_login_variable_is_seen_on_the_next_call(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LOGIN_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("USER", "first")
    assert local_principal() == "first"
    monkeypatch.setenv("LOGNAME", "second")  # getpass reads LOGNAME before USER
    assert local_principal() == "second"
    monkeypatch.delenv("LOGNAME")
    assert local_principal() == "first"


def test_a_changed_home_is_seen_on_the_next_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("COLIBRI_CONFIG", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "one"))
    assert config_path() == tmp_path / "one" / ".config" / "colibri-router" / "config.toml"
    monkeypatch.setenv("HOME", str(tmp_path / "two"))
    assert config_path() == tmp_path / "two" / ".config" / "colibri-router" / "config.toml"


def _only(patch: pytest.MonkeyPatch, names: Iterable[str], assigned: dict[str, str]) -> None:
    """Of ``names``, exactly those ``assigned`` are set, to their values."""
    for name in names:
        patch.delenv(name, raising=False)
    for name, value in assigned.items():
        patch.setenv(name, value)
