"""Reading many variables at once (settings, redaction): the same answers as one lookup per
variable, whatever stands in for os.environ, and nothing kept between calls."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.environment import values_of
from colibri_router.redaction import REDACTED, redact
from colibri_router.settings import load_settings

NAMES = [f"COLIBRI_TEST_VARIABLE_{index}" for index in range(6)]
# Any text an environment value can hold (no NUL, no lone surrogate), non-ASCII included.
VALUES = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


@given(st.dictionaries(st.sampled_from(NAMES), VALUES))
def test_values_of_matches_one_lookup_per_name(assigned: dict[str, str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        for name in NAMES:
            patch.delenv(name, raising=False)
        for name, value in assigned.items():
            patch.setenv(name, value)

        found = values_of(frozenset(NAMES))

        assert found == {name: os.environ[name] for name in NAMES if name in os.environ}


@given(st.dictionaries(st.sampled_from(NAMES), VALUES))
def test_a_plain_mapping_standing_in_for_os_environ_is_read_too(assigned: dict[str, str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", {"PATH": "/bin", **assigned})

        assert values_of(frozenset(NAMES)) == assigned


def test_settings_follow_a_variable_set_then_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    before = load_settings().timeout_s
    monkeypatch.setenv("COLIBRI_TIMEOUT_S", "7")
    during = load_settings().timeout_s
    monkeypatch.delenv("COLIBRI_TIMEOUT_S")

    assert (before, during, load_settings().timeout_s) == (300.0, 7.0, 300.0)


def test_a_key_set_after_a_first_line_is_redacted_from_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redact("model=abcd-key-1234") == "model=abcd-key-1234"
    monkeypatch.setenv("MISTRAL_API_KEY", "abcd-key-1234")

    assert redact("model=abcd-key-1234") == f"model={REDACTED}"


def test_a_key_inside_a_longer_key_leaves_nothing_of_either(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "shared-prefix")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "shared-prefix-and-more")

    assert redact("a shared-prefix-and-more b shared-prefix c") == f"a {REDACTED} b {REDACTED} c"
