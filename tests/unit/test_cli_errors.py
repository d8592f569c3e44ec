"""The commands that print JSON (call, ask-many, models, threads, usage) refuse a bad option or value
as they refuse everything else: the ``{"error": ...}`` object, INVALID_REQUEST, a message naming the
option, the value and the valid choices, exit status 1. File options name the option, the file and
what was wrong. ``threads delete`` of an unknown ID fails as ``threads show`` does. ``--help``, a
missing subcommand, and the commands that print no JSON (serve, token, doctor, run) keep argparse's
usage message and exit 2. In-process: the parser and the error path, no server."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from colibri_router import cli
from colibri_router.providers import provider_names


def run(*argv: str) -> tuple[int, str, str]:
    """``colibri-router argv...``: the exit status, stdout and stderr (argparse's exits included)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(list(argv))
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
    return status, out.getvalue(), err.getvalue()


def refused(*argv: str) -> str:
    """The INVALID_REQUEST message ``argv`` is refused with (exit 1, one JSON object, nothing on stderr)."""
    status, out, err = run(*argv)
    assert status == 1, (out, err)
    error = json.loads(out)["error"]
    assert error["code"] == "INVALID_REQUEST", error
    assert "usage:" not in out + err
    message: str = error["message"]
    return message


# The choice options of every command that prints JSON: (argv before the value, the option, its choices).
CHOICES: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = [
    (("call", "hi"), "--provider", tuple(provider_names())),
    (("call", "hi"), "--reasoning", ("off", "low", "medium", "high")),
    (("ask-many", "hi"), "--reasoning", ("off", "low", "medium", "high")),
    (("ask-many", "hi"), "--detail", ("summary", "full")),
    (("models",), "--provider", tuple(provider_names())),
    (("usage",), "--since", ("today", "7d", "30d", "all")),
    (("usage",), "--by", ("provider", "model", "day")),
]
# The typed options: (argv before the value, the option, the type argparse converts with).
TYPED: list[tuple[tuple[str, ...], str, type]] = [
    (("call", "hi"), "--temperature", float),
    (("call", "hi"), "--max-tokens", int),
    (("call", "hi"), "--timeout", float),
    (("call", "hi"), "--max-cost", float),
    (("ask-many", "hi"), "--temperature", float),
    (("ask-many", "hi"), "--max-tokens", int),
    (("ask-many", "hi"), "--timeout", float),
    (("ask-many", "hi"), "--max-cost", float),
    (("threads",), "--limit", int),
]
VALUES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (("call", "hi", "--provider", "nope"), ["--provider", "'nope'", "kimi", "claude"]),
        (("call", "hi", "--temperature", "abc"), ["--temperature", "'abc'", "float"]),
        (("call", "hi", "--reasoning", "bogus"), ["--reasoning", "'bogus'", "off", "high"]),
        (("usage", "--since", "yesterday"), ["--since", "'yesterday'", "today", "7d", "30d", "all"]),
        (("threads", "nope"), ["action", "'nope'", "list", "show", "delete"]),
    ],
)
def test_the_issues_examples_are_json_errors_naming_the_option_the_value_and_the_choices(
    argv: tuple[str, ...], named: list[str]
) -> None:
    message = refused(*argv)
    assert all(word in message for word in named), message
    assert not message.startswith("argument ")


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(CHOICES), value=VALUES)
def test_any_value_outside_a_choice_options_choices_is_refused_with_the_choices(
    case: tuple[tuple[str, ...], str, tuple[str, ...]], value: str
) -> None:
    before, option, choices = case
    assume(value not in choices)
    message = refused(*before, f"{option}={value}")
    assert message.startswith(f"{option}: invalid choice: {value!r}"), message
    assert all(choice in message for choice in choices), message


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(TYPED), value=VALUES)
def test_any_value_a_typed_option_cannot_read_is_refused_naming_both(
    case: tuple[tuple[str, ...], str, type], value: str
) -> None:
    before, option, kind = case
    with contextlib.suppress(ValueError):
        kind(value)
        assume(False)  # a value argparse reads is the tool's to judge (below)
    message = refused(*before, f"{option}={value}")
    assert message == f"{option}: invalid {kind.__name__} value: {value!r}", message


@pytest.mark.parametrize(
    ("argv", "start"),
    [
        (("call", "hi", "--temperature", "5"), "--temperature 5: "),
        (("call", "hi", "--max-tokens", "0"), "--max-tokens 0: "),
        (("call", "hi", "--timeout", "-1"), "--timeout -1: "),
        (("call", "hi", "--max-cost", "-2.5"), "--max-cost -2.5: "),
        (("call", "hi", "--fallback", ""), "--fallback '': "),
        (("call", "hi", "--fallback", "kimi", "--fallback", ""), "--fallback '': "),
        (("ask-many", "hi", "--model", "kimi"), "--model: "),
        (("threads", "--limit", "0"), "--limit 0: "),
    ],
)
def test_a_value_the_tool_refuses_is_named_by_its_option(argv: tuple[str, ...], start: str) -> None:
    message = refused(*argv)
    assert message.startswith(start), message


def test_an_unknown_option_is_a_json_error_naming_it() -> None:
    for argv in (("call", "hi", "--bogus"), ("models", "extra"), ("usage", "--since", "7d", "--nope=1")):
        message = refused(*argv)
        assert message.startswith(f"unrecognized arguments: {argv[-1]} (see colibri-router {argv[0]} --help)")


def test_threads_show_and_delete_without_an_id_say_what_is_missing() -> None:
    for action in ("show", "delete"):
        assert refused("threads", action).startswith(f"threads {action} needs a thread ID")


def test_threads_delete_of_an_unknown_id_fails_as_show_does() -> None:
    shown, deleted = run("threads", "show", "th_nope"), run("threads", "delete", "th_nope")
    assert shown[0] == deleted[0] == 1
    assert json.loads(deleted[1]) == json.loads(shown[1])
    assert "th_nope" in json.loads(deleted[1])["error"]["message"]


# ---------------------------------------------------------------------------------------------------------
# --tools and --messages: the option, the file and what was wrong


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app.py").write_text("print('hello')\n")
    (tmp_path / "latin1.json").write_bytes(b'["caf\xe9"]')
    (tmp_path / "folder").mkdir()
    return tmp_path


@pytest.mark.parametrize("option", ["--tools", "--messages"])
@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("missing.json", "cannot read the file: No such file or directory"),
        ("folder", "cannot read the file: Is a directory"),
        ("app.py", "the file is not JSON (Expecting value at line 1 column 1)"),
        ("latin1.json", "the file is not UTF-8 text"),
    ],
)
def test_a_file_option_names_the_option_the_file_and_the_problem(
    files: Path, option: str, name: str, problem: str
) -> None:
    argv: list[Any] = ["call", option, name] if option == "--messages" else ["call", "hi", option, name]
    assert refused(*argv) == f"{option} {name}: {problem}"


def test_a_file_of_the_wrong_shape_names_the_option_the_file_and_the_path_inside(files: Path) -> None:
    (files / "tools.json").write_text('[{"name": "x", "input_schema": 5}]')
    message = refused("call", "hi", "--tools", "tools.json")
    assert message.startswith("--tools tools.json: tools[0]"), message


# ---------------------------------------------------------------------------------------------------------
# What stays argparse's


def test_help_still_prints_the_usage_and_exits_0() -> None:
    for command in ("call", "threads", "usage", "models", "ask-many"):
        status, out, _ = run(command, "--help")
        assert status == 0 and out.startswith(f"usage: colibri-router {command}")


@pytest.mark.parametrize(
    "argv",
    [("token",), ("nope",), ("run", "--repeat", "x"), ("doctor", "--bogus"), ("serve", "--port", "x")],
    ids=["missing-subcommand", "unknown-command", "run", "doctor", "serve"],
)
def test_commands_that_print_no_json_keep_argparses_usage_and_exit_2(argv: tuple[str, ...]) -> None:
    status, out, err = run(*argv)
    assert status == 2 and out == ""
    assert err.startswith("usage: colibri-router") and "error: " in err
