"""Credential-shaped text: every format of the corpus of fake credentials is caught in a file, in an
error and in a log line, the warning names its kind and never its value, ordinary code is left alone,
and redaction is idempotent."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from secrets_corpus import Sample, corpus, provider_keys

from colibri_router.context import gather
from colibri_router.errors import ApiError
from colibri_router.providers.builtin import BUILTIN_PROVIDERS
from colibri_router.redaction import REDACTED, redact, redact_log, scan
from colibri_router.redaction.hints import log_line_may_hold_secret, may_hold_secret
from colibri_router.settings import load_settings

CORPUS = corpus()
# Kinds caught by a block over the whole text: their lines need no hint of their own.
BLOCK_KINDS = {"private key"}
# Providers whose keys have no shape of their own (caught by name, or as this machine's key value).
NO_SHAPE = {"mistral", "cohere", "ollama", "vllm"}


@pytest.mark.parametrize("sample", CORPUS, ids=[sample.name for sample in CORPUS])
def test_every_format_in_a_file_is_redacted_and_named(sample: Sample) -> None:
    result = scan(sample.text, sample.file)

    for secret in sample.secrets:
        assert secret not in result.text
    assert REDACTED in result.text
    assert sample.kind in result.kinds


@pytest.mark.parametrize("redactor", [redact, redact_log], ids=["error", "log line"])
@pytest.mark.parametrize("sample", CORPUS, ids=[sample.name for sample in CORPUS])
def test_every_format_in_an_error_or_a_log_line_is_redacted(sample: Sample, redactor: Callable[[str], str]) -> None:
    redacted = redactor(f"upstream said: {sample.text}")

    for secret in sample.secrets:
        assert secret not in redacted


def test_every_calls_own_log_line_skips_the_detector() -> None:
    """A model name of 20 letters, digits and dashes is no token: the line every successful call
    logs must not pay for the detector."""
    line = "[kimi] model=kimi-k2-0905-preview prompt_tokens=20 completion_tokens=10 latency_ms=4"
    assert not log_line_may_hold_secret(line)
    assert redact_log(line) == line
    # The broader pre-filter of files and errors does look at it (and finds nothing).
    assert may_hold_secret(line) and redact(line) == line


@pytest.mark.parametrize("sample", CORPUS, ids=[sample.name for sample in CORPUS])
def test_the_pre_filter_sees_every_format(sample: Sample) -> None:
    assert may_hold_secret(sample.text)
    if sample.kind not in BLOCK_KINDS:
        for line in sample.text.splitlines():
            if any(secret in line for secret in sample.secrets):
                assert may_hold_secret(line), line


def test_the_corpus_covers_every_area_of_the_issue() -> None:
    areas = {sample.area for sample in CORPUS}
    assert areas >= {"cloud", "VCS", "package registry", "payment", "chat", "JWT", "private key", "URL", "provider"}
    kinds = {sample.kind for sample in CORPUS}
    assert {"AWS key", "Azure storage key", "GitHub token", "GitLab token", "npm token", "PyPI token"} <= kinds
    assert {"Stripe key", "Slack token", "Discord token", "JWT", "password in URL", "Docker auth"} <= kinds


def test_every_keyed_provider_has_a_key_shape_or_is_listed_without_one() -> None:
    keyed = {spec.name for spec in BUILTIN_PROVIDERS if spec.key_envs}
    shaped = {spec.name for spec in BUILTIN_PROVIDERS if spec.key_pattern}
    assert keyed - shaped == NO_SHAPE
    named = {kind.removesuffix(" key") for kind, _ in provider_keys(random.Random(0))}
    assert shaped - {"kimi-anthropic"} <= named


def test_each_fake_provider_key_has_its_registry_shape() -> None:
    patterns = {f"{spec.name} key": spec.key_pattern for spec in BUILTIN_PROVIDERS if spec.key_pattern}
    for kind, key in provider_keys(random.Random(1)):
        assert re.fullmatch(patterns[kind], key), kind


def test_a_key_inside_a_client_constructor_is_named_by_its_provider() -> None:
    [(_, key)] = [pair for pair in provider_keys(random.Random(2)) if pair[0] == "claude key"]

    result = scan(f'client = anthropic.Anthropic(api_key="{key}")\n', "app.py")

    assert result.text == f'client = anthropic.Anthropic(api_key="{REDACTED}")\n'
    assert result.kinds == ("claude key",)


def test_a_file_warning_names_the_kinds_and_never_the_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [github] = [s for s in CORPUS if s.kind == "GitHub token" and s.file == "ci.sh"]
    [database] = [s for s in CORPUS if s.kind == "password in URL" and s.text.startswith('DATABASE_URL = "postgresql')]
    (tmp_path / "deploy.py").write_text(github.text + database.text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))

    reading = gather(["deploy.py"], load_settings())

    sent = reading.parts[0].text  # type: ignore[union-attr]
    assert reading.warnings == [
        "files: deploy.py holds key-shaped text (GitHub token, password in URL), sent as [redacted]"
    ]
    for secret in (*github.secrets, *database.secrets):
        assert secret not in sent and secret not in reading.warnings[0]


def test_an_upstream_error_echoing_a_token_is_scrubbed() -> None:
    slack = next(s for s in CORPUS if s.kind == "Slack token" and s.file == "bot.yaml")
    token = slack.secrets[0]
    cause = ApiError(f"invalid_auth: token {token} was revoked", status=401)
    error = ApiError(f"Slack webhook failed: {cause}", status=401)
    error.__cause__ = cause

    error.scrub("this-machines-key-0000")

    assert token not in error.message and token not in str(cause) and REDACTED in error.message


# -- ordinary text, and idempotence ------------------------------------------------------------------------

_WORDS = st.sampled_from(
    ["value", "result", "items", "compute", "self", "data", "index", "count", "name", "path", "config", "user"]
)
_LITERALS = st.one_of(
    st.integers(-(10**9), 10**9).map(str),
    st.text("abcdefghijklmnopqrstuvwxyz ", max_size=18).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
_CODE_LINE = st.builds(
    lambda indent, target, op, call, args, comment: (
        f"{'    ' * indent}{target} {op} {call}({', '.join(args)}){comment}"
    ),
    st.integers(0, 3),
    _WORDS,
    st.sampled_from(["=", "+=", "==", "is", ":"]),
    st.builds(lambda a, b: f"{a}.{b}", _WORDS, _WORDS),
    st.lists(st.one_of(_WORDS, _LITERALS), max_size=4),
    st.one_of(st.just(""), st.builds(lambda w: f"  # {w} of the {w}s", _WORDS)),
)


@settings(max_examples=300)
@given(st.lists(_CODE_LINE, min_size=1, max_size=30).map("\n".join))
def test_ordinary_code_is_left_alone(code: str) -> None:
    """Code with no credential in it: the measured false-positive rate of such code is zero
    (benchmarks/redaction.py measures real libraries' sources: 0.02% of lines)."""
    assert scan(code, "module.py").text == code
    assert redact(code) == code


# Tokens that carry their own shape (a prefix, a structure): caught wherever they stand. A password, a
# bare base64 AWS secret or a key with no shape is caught by what surrounds it, tested above.
_SELF_SHAPED = {"GitHub token", "GitLab token", "npm token", "PyPI token", "Stripe key", "Discord token", "JWT"}


def test_a_docker_config_auth_is_base64_and_not_any_word() -> None:
    assert scan('{"auth": "required", "mode": "strict"}', "policy.json").kinds == ()


def test_the_false_positive_rate_on_the_standard_librarys_source_stays_as_measured() -> None:
    """Ordinary source code holds no credential: every line changed is a false positive. Over these
    packages of the standard library one line in 26,000 is (urllib's docstring example
    `passwd='geheim$parole'`, a password indeed); the bound is 0.1%."""
    import email
    import http
    import json
    import logging
    import urllib

    lines = changed = 0
    for package in (email, http, json, logging, urllib):
        for path in sorted(Path(package.__file__ or "").parent.glob("*.py")):
            text = path.read_text(encoding="utf-8")
            result = scan(text, path.name)
            before, after = text.splitlines(), result.text.splitlines()
            lines += len(before)
            changed += sum(1 for old, new in zip(before, after, strict=True) if old != new)
    assert lines > 10_000
    assert changed / lines <= 0.001, changed


_TOKENS = st.sampled_from(
    [secret for sample in CORPUS if sample.kind in _SELF_SHAPED for secret in sample.secrets]
    + [key for _, key in provider_keys(random.Random(3))]
)
_SEPARATORS = st.sampled_from([" ", "\n", "\t", ", ", " = ", ": ", "(", ")", "'", '"', "[", "]"])


@settings(max_examples=200)
@given(st.text(max_size=40), _SEPARATORS, _TOKENS, _SEPARATORS, st.text(max_size=40))
def test_a_token_amid_any_text_is_redacted(before: str, left: str, token: str, right: str, after: str) -> None:
    text = before + left + token + right + after
    assert token not in redact(text)
    assert token not in redact_log(text)
    assert token not in scan(text, "notes.txt").text


_ANY_TEXT = st.one_of(
    st.text(max_size=120),
    st.builds(lambda a, s, b: a + s.text + b, st.text(max_size=20), st.sampled_from(CORPUS), st.text(max_size=20)),
)


@settings(max_examples=200)
@given(_ANY_TEXT)
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    logged = redact_log(text)
    assert redact_log(logged) == logged
    scanned = scan(text, "config.yaml").text
    assert scan(scanned, "config.yaml").text == scanned
