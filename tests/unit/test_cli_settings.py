"""Start-up configuration: one reading of the settings decides the log level, and bad settings
are reported at once instead of surfacing later as mysteriously missing keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colibri_router import cli
from colibri_router.errors import ConfigError
from colibri_router.providers import BUILTIN, connect
from colibri_router.settings import load_settings


def test_missing_env_file_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLIBRI_ENV_FILE", str(tmp_path / "nope.env"))
    with pytest.raises(ConfigError, match=r"COLIBRI_ENV_FILE points at .*nope\.env"):
        load_settings()


def test_env_file_path_expands_the_home_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "colibri.env").write_text("COLIBRI_KIMI_API_KEY=from-file\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("COLIBRI_ENV_FILE", "~/colibri.env")
    assert connect(BUILTIN["kimi"]).api_key == "from-file"


def test_warn_is_accepted_as_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_LOG_LEVEL", "WARN")
    assert load_settings().log_level == "warning"


def test_log_level_in_the_env_file_applies_at_start_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = tmp_path / "colibri.env"
    env_file.write_text("COLIBRI_LOG_LEVEL=error\n")
    monkeypatch.setenv("COLIBRI_ENV_FILE", str(env_file))
    cli._configure_logging_from_settings()
    cli.get_logger("t").warning("hidden at error level")
    cli.get_logger("t").error("shown at error level")
    err = capsys.readouterr().err
    assert "shown at error level" in err
    assert "hidden at error level" not in err


def test_invalid_settings_are_reported_on_stderr_at_start_up(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLIBRI_LOG_LEVEL", "loud")
    cli._configure_logging_from_settings()
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = [json.loads(x) for x in captured.err.splitlines() if "invalid settings" in x]
    assert line["level"] == "warning"
    assert "COLIBRI_LOG_LEVEL" in line["problem"]


def test_cli_call_with_unreadable_tools_file_is_an_invalid_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["call", "hi", "--tools", str(tmp_path / "missing.json")])
    assert code == 1
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "INVALID_REQUEST"


def test_cli_call_arguments_failing_the_schema_are_said_as_the_tool_says_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["call", "hi", "--max-tokens", "0"])
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 1
    assert (error["code"], error["message"]) == (
        "INVALID_REQUEST",
        "--max-tokens 0: Input should be greater than or equal to 1",  # the tool's words, the option's name
    )


def test_a_closed_stderr_never_breaks_a_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stream = (tmp_path / "stderr.log").open("w")
    cli.configure_logging("info", stream)
    stream.close()  # the host went away, or closed our stderr
    cli.get_logger("t").info("[kimi] model=x prompt_tokens=1 completion_tokens=1 latency_ms=1")
    cli.get_logger("t").error("still fine")


def test_a_broken_config_file_is_logged_at_start_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[providers.kimi]\nwire = 'openai'\nbase_url = 'http://x'\n")
    monkeypatch.setenv("COLIBRI_CONFIG", str(config))
    cli._configure_logging_from_settings()
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert line["event"] == "invalid config file: calls will fail until this is fixed"
    assert "'kimi' is a built-in provider" in line["problem"]
