"""The tokens file of serve --http: its format, lookups, and ``token add``."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.cli import main
from colibri_router.errors import ConfigError
from colibri_router.tokens import NAME_PATTERN, TokensFile, add_token, parse_tokens, token_hash

names = st.from_regex(NAME_PATTERN, fullmatch=True)


@given(entries=st.dictionaries(names, st.text(min_size=1, max_size=40), max_size=5))
def test_every_token_finds_its_name_and_nothing_else_does(entries: dict[str, str]) -> None:
    tokens = {name: f"token-{index}-{secret}" for index, (name, secret) in enumerate(entries.items())}
    text = "# team tokens\n\n" + "".join(f"{name}:{token_hash(token)}\n" for name, token in tokens.items())
    parsed = parse_tokens(text, "tokens")
    assert [entry.name for entry in parsed] == list(tokens)
    for name, token in tokens.items():
        assert {entry.name for entry in parsed if entry.sha256 == token_hash(token)} == {name}


def test_the_hash_is_the_hex_sha256_of_the_token() -> None:
    assert token_hash("abc") == hashlib.sha256(b"abc").hexdigest()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("alice\n", "line 1: expected name:sha256-hex"),
        ("alice:1234\n", "line 1: expected name:sha256-hex"),
        (f"# c\nbad name:{'a' * 64}\n", "line 2"),
        (f"alice:{'a' * 64}\nalice:{'b' * 64}\n", "line 2: the name 'alice' appears twice"),
    ],
)
def test_a_malformed_line_is_named(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        parse_tokens(text, "tokens")


def test_add_token_appends_a_hash_to_a_private_file_and_refuses_a_second_token_for_a_name(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "tokens"
    alice = add_token(path, "alice")
    bob = add_token(path, "bob")
    assert alice != bob and len(alice) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == f"alice:{token_hash(alice)}\nbob:{token_hash(bob)}\n"
    assert alice not in path.read_text()
    with pytest.raises(ConfigError, match="already has a token named 'alice'"):
        add_token(path, "alice")
    with pytest.raises(ConfigError, match="invalid token name"):
        add_token(path, "two words")


def test_the_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    first = add_token(path, "alice")
    tokens = TokensFile(path)
    assert tokens.name_of(first) == "alice"
    assert tokens.name_of("nope") is None
    second = add_token(path, "bob")
    assert tokens.name_of(second) == "bob"
    path.write_text(f"bob:{token_hash(second)}\n")
    os.utime(path, ns=(1, 1))  # a different stamp even within the file system's time resolution
    assert tokens.name_of(first) is None


def test_an_unreadable_file_is_a_config_error_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="COLIBRI_HTTP_TOKENS_FILE"):
        TokensFile(tmp_path / "missing").entries()


def test_token_add_prints_the_token_once_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tokens"
    monkeypatch.setenv("COLIBRI_HTTP_TOKENS_FILE", str(path))
    assert main(["token", "add", "alice"]) == 0
    out, err = capsys.readouterr()
    token = out.strip()
    assert path.read_text() == f"alice:{token_hash(token)}\n"
    assert token not in err and "alice" in err


def test_token_add_without_the_variable_says_which_to_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "add", "alice"]) == 2
    assert "set COLIBRI_HTTP_TOKENS_FILE" in capsys.readouterr().err
