"""Settings (read from the environment per call, empty means unset) and logging (stderr only, secrets
redacted). The autouse conftest fixture has already removed COLIBRI_* and ANTHROPIC_* variables."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.cli import _configure_logging_from_settings
from colibri_router.errors import ConfigError
from colibri_router.logs import configure_logging, get_logger
from colibri_router.providers import BUILTIN, connect
from colibri_router.redaction import REDACTED, redact
from colibri_router.redaction.shapes import SECRET_PATTERNS
from colibri_router.settings import load_settings

KEY = "zq-SECRET-kimi-9f3b7c1e"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """Leave structlog and the standard library's logging as this test found them."""
    saved_structlog, was_configured = structlog.get_config(), structlog.is_configured()
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level)
    httpx_level = logging.getLogger("httpx").level
    record_flags = (logging.logThreads, logging.logProcesses, logging.logMultiprocessing)
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
    if was_configured:
        structlog.configure(**saved_structlog)
    root.handlers, root.level = saved_root
    logging.getLogger("httpx").setLevel(httpx_level)
    logging.logThreads, logging.logProcesses, logging.logMultiprocessing = record_flags


def json_lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


# --- settings --------------------------------------------------------------------------------------------------


def test_defaults_with_an_empty_environment() -> None:
    settings = load_settings()

    assert connect(BUILTIN["vllm"]).api_key is None
    assert connect(BUILTIN["kimi"], api_key="k").base_url == "https://api.moonshot.ai/v1"
    assert connect(BUILTIN["claude"], api_key="k").base_url == "https://api.anthropic.com"
    assert settings.kimi_tool_ids == "renumber"
    assert settings.default_provider == "kimi"
    assert settings.timeout_s == 300.0
    assert settings.log_level == "info"


def test_every_variable_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", KEY)
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("COLIBRI_KIMI_TOOL_IDS", "repair")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "claude-key-1234")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "claude")
    monkeypatch.setenv("COLIBRI_TIMEOUT_S", "12.5")
    monkeypatch.setenv("COLIBRI_LOG_LEVEL", "debug")

    settings = load_settings()

    assert connect(BUILTIN["kimi"]) == connect(BUILTIN["kimi"], KEY, "http://127.0.0.1:9/v1")
    assert connect(BUILTIN["claude"]) == connect(BUILTIN["claude"], "claude-key-1234", "http://127.0.0.1:9")
    assert (settings.kimi_tool_ids, settings.default_provider) == ("repair", "claude")
    assert (settings.timeout_s, settings.log_level) == (12.5, "debug")


def test_i2_keys_never_show_in_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", KEY)

    settings = load_settings()

    assert KEY not in repr(settings)
    assert KEY not in str(settings)


@pytest.mark.parametrize(
    "variable", ["COLIBRI_KIMI_BASE_URL", "ANTHROPIC_BASE_URL", "COLIBRI_KIMI_API_KEY", "COLIBRI_TIMEOUT_S"]
)
def test_i4_empty_variables_count_as_unset(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "")
    with_empty = load_settings()
    monkeypatch.delenv(variable)

    assert with_empty == load_settings()


def test_i2_settings_are_read_at_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", "http://first.example/v1")
    monkeypatch.setenv("COLIBRI_TIMEOUT_S", "1")
    first = (load_settings().timeout_s, connect(BUILTIN["kimi"], api_key="k").base_url)
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", "http://second.example/v1")
    monkeypatch.setenv("COLIBRI_TIMEOUT_S", "2")
    second = (load_settings().timeout_s, connect(BUILTIN["kimi"], api_key="k").base_url)

    assert (first, second) == ((1.0, "http://first.example/v1"), (2.0, "http://second.example/v1"))


def test_choice_variables_are_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", " Claude ")
    monkeypatch.setenv("COLIBRI_KIMI_TOOL_IDS", "REPAIR")
    monkeypatch.setenv("COLIBRI_LOG_LEVEL", "Warning")

    settings = load_settings()

    assert (settings.default_provider, settings.kimi_tool_ids, settings.log_level) == ("claude", "repair", "warning")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("COLIBRI_TIMEOUT_S", "0"),
        ("COLIBRI_TIMEOUT_S", "soon"),
        ("COLIBRI_KIMI_TOOL_IDS", "keep"),
        ("COLIBRI_LOG_LEVEL", "loud"),
    ],
)
def test_invalid_values_are_config_errors_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)

    with pytest.raises(ConfigError) as caught:
        load_settings()

    assert variable in str(caught.value)
    assert caught.value.code == "CONFIG_ERROR"


def test_invalid_value_is_not_echoed_in_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_TIMEOUT_S", KEY)  # a key pasted into the wrong variable

    with pytest.raises(ConfigError) as caught:
        load_settings()

    assert KEY not in str(caught.value)


def test_a_stray_dotenv_file_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"COLIBRI_KIMI_API_KEY={KEY}\nCOLIBRI_DEFAULT_PROVIDER=claude\n")
    monkeypatch.chdir(tmp_path)

    settings = load_settings()

    with pytest.raises(ConfigError, match="no API key for kimi"):
        connect(BUILTIN["kimi"])
    assert settings.default_provider == "kimi"


def test_colibri_env_file_names_a_dotenv_to_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = tmp_path / "colibri.env"
    env_file.write_text(f"COLIBRI_KIMI_API_KEY={KEY}\nCOLIBRI_KIMI_BASE_URL=\n")
    monkeypatch.setenv("COLIBRI_ENV_FILE", str(env_file))

    connection = connect(BUILTIN["kimi"])

    assert connection.api_key == KEY
    assert connection.base_url == "https://api.moonshot.ai/v1"  # empty in the file counts as unset


def test_the_environment_wins_over_the_env_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = tmp_path / "colibri.env"
    env_file.write_text("COLIBRI_DEFAULT_PROVIDER=claude\n")
    monkeypatch.setenv("COLIBRI_ENV_FILE", str(env_file))
    monkeypatch.setenv("COLIBRI_DEFAULT_PROVIDER", "kimi")

    assert load_settings().default_provider == "kimi"


# --- redaction ---------------------------------------------------------------------------------------------------


def test_redact_replaces_a_given_secret_wherever_it_appears() -> None:
    text = f"key {KEY} rejected; retry with {KEY}!"

    assert redact(text, KEY) == f"key {REDACTED} rejected; retry with {REDACTED}!"


def test_redact_replaces_the_values_of_the_key_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "kimi-env-value-77")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "claude-env-value-88")

    assert redact("a kimi-env-value-77 b claude-env-value-88 c") == f"a {REDACTED} b {REDACTED} c"


@pytest.mark.parametrize(
    "text",
    [
        "Incorrect API key provided: sk-abc123def456ghi",
        "header Authorization: Bearer abcdefgh12345678",
        'sent {"x-api-key": "abcdefgh12345678"}',
    ],
    ids=["sk-key", "bearer", "x-api-key"],
)
def test_redact_replaces_credential_shaped_tokens(text: str) -> None:
    redacted = redact(text)

    assert REDACTED in redacted
    assert "abc123def456ghi" not in redacted
    assert "abcdefgh12345678" not in redacted


def test_redact_leaves_ordinary_text_and_tiny_secrets_alone() -> None:
    text = "HTTP 429 rate_limit_error: slow down (task-ID 42)"

    assert redact(text, None, "", "42") == text


# Credential-shaped text: a pattern's word, spelled also with letters that the pattern's ignored case
# matches but that case-fold to other letters (dotless and dotted Turkish i, long s, Kelvin sign),
# then a separator and a token, between filler; and any text at all.
_WORDS = [
    "sk-",
    "SK-",
    "\u017fk-",
    "s\u212a-",
    "bearer",
    "BeArEr",
    "x-api-key",
    "x-ap\u0131-key",
    "X-AP\u0130-KEY",
    "key",
]
_TRICKY_TEXT = st.builds(
    "".join,
    st.tuples(
        st.text(max_size=5),
        st.sampled_from(_WORDS),
        st.sampled_from(["", " ", "\t", ": ", "=", '"=', "'"]),
        st.text("abcXYZ019_-.\u0131", max_size=12),
        st.text(max_size=5),
    ),
) | st.text(max_size=40)


@given(_TRICKY_TEXT)
def test_redact_skips_the_pattern_only_for_text_it_cannot_match(text: str) -> None:
    """The cheap pre-check never lets a credential-shaped token through."""
    assert SECRET_PATTERNS.search(redact(text)) is None


# --- logging -------------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("restore_logging")
def test_configure_logging_writes_json_lines_to_the_given_stream(capsys: pytest.CaptureFixture[str]) -> None:
    stream = io.StringIO()

    configure_logging("info", stream)
    structlog.get_logger("colibri_router").info("hello", provider="kimi")
    logging.getLogger("mcp.server").warning("from the SDK")

    lines = json_lines(stream)
    assert [(line["event"], line["level"]) for line in lines] == [("hello", "info"), ("from the SDK", "warning")]
    assert lines[0]["provider"] == "kimi"
    assert capsys.readouterr().out == ""


@pytest.mark.usefixtures("restore_logging")
def test_a_json_line_has_its_level_a_utc_timestamp_and_its_exception() -> None:
    stream = io.StringIO()
    configure_logging("info", stream)
    before = datetime.now(UTC)
    try:
        raise ValueError("the cause")
    except ValueError:
        structlog.get_logger().exception("it broke", call=3)
    after = datetime.now(UTC)

    [line] = json_lines(stream)
    assert (line["event"], line["level"], line["call"]) == ("it broke", "error", 3)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", str(line["timestamp"]))
    stamped = datetime.strptime(str(line["timestamp"]), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before - timedelta(milliseconds=1) <= stamped <= after
    assert "ValueError: the cause" in str(line["exception"])


@pytest.mark.usefixtures("restore_logging")
def test_a_standard_library_line_is_the_same_json_line_with_its_logger_and_exception() -> None:
    stream = io.StringIO()
    configure_logging("info", stream)
    try:
        raise KeyError("the cause")
    except KeyError:
        logging.getLogger("uvicorn.error").exception("%s failed", "the app")

    [line] = json_lines(stream)
    assert list(line) == ["event", "level", "logger", "timestamp", "exception"]
    assert (line["event"], line["level"], line["logger"]) == ("the app failed", "error", "uvicorn.error")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", str(line["timestamp"]))
    assert "KeyError: 'the cause'" in str(line["exception"])
    # No line shows them, so records skip looking up the thread and the process.
    assert not (logging.logThreads or logging.logProcesses or logging.logMultiprocessing)


@pytest.mark.usefixtures("restore_logging")
def test_configure_logging_redacts_keys_in_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", KEY)
    stream = io.StringIO()

    configure_logging("info", stream)
    structlog.get_logger().warning(f"upstream echoed {KEY}", detail=f"key={KEY}")
    logging.getLogger("httpx").error(f"request with {KEY}")

    assert KEY not in stream.getvalue()
    assert stream.getvalue().count(REDACTED) == 3


@pytest.mark.usefixtures("restore_logging")
def test_log_level_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLIBRI_LOG_LEVEL", "warning")

    _configure_logging_from_settings()  # what `colibri-router` does first: the level comes from settings
    structlog.get_logger().info("dropped")
    structlog.get_logger().warning("kept")

    assert [json.loads(line)["event"] for line in capsys.readouterr().err.splitlines()] == ["kept"]


@pytest.mark.usefixtures("restore_logging")
def test_httpx_request_lines_are_quiet_at_info() -> None:
    stream = io.StringIO()

    configure_logging("info", stream)
    logging.getLogger("httpx").info('HTTP Request: POST https://api.moonshot.ai/v1/chat/completions "200 OK"')

    assert stream.getvalue() == ""
    assert logging.getLogger("httpx").level == logging.WARNING


@pytest.mark.usefixtures("restore_logging")
def test_get_logger_without_configuration_writes_to_stderr_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    get_logger().info("[kimi] model=m prompt_tokens=1 completion_tokens=2 latency_ms=3", note=KEY)

    captured = capsys.readouterr()
    assert captured.out == ""
    assert "[kimi] model=m prompt_tokens=1 completion_tokens=2 latency_ms=3" in captured.err
    assert KEY not in captured.err


def test_every_providers_key_is_redacted_from_log_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, key in (("GEMINI_API_KEY", "AIzaSyGeminiKey123"), ("OPENROUTER_API_KEY", "or-v1-keyvalue-99")):
        monkeypatch.setenv(variable, key)
        assert redact(f"upstream said: bad key {key}") == f"upstream said: bad key {REDACTED}"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.usefixtures("restore_logging")
def test_on_a_terminal_both_sources_write_console_lines_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", KEY)
    stream = _Terminal()
    configure_logging("info", stream)

    structlog.get_logger("colibri_router").info("ours", detail=f"key={KEY}")
    logging.getLogger("uvicorn.access").info("theirs with %s", KEY)

    ours, theirs = stream.getvalue().splitlines()
    assert "ours" in ours and "theirs with" in theirs and "uvicorn.access" in theirs
    assert not ours.startswith("{") and not theirs.startswith("{")
    assert KEY not in stream.getvalue() and stream.getvalue().count(REDACTED) == 2
