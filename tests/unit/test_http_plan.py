"""What serve --http decides before it listens: refusals, Host/Origin lists, authentication."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri_router.errors import ConfigError
from colibri_router.server.http import HttpOptions, is_loopback, plan
from colibri_router.settings import Settings
from colibri_router.tokens import add_token


def settings(**values: str) -> Settings:
    return Settings(**values)  # type: ignore[arg-type]  # by field name, as populate_by_name allows


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.5", "::1", "localhost"])
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "router.example.com"])
def test_other_addresses(host: str) -> None:
    assert not is_loopback(host)


def test_loopback_without_settings_accepts_only_localhost_and_needs_no_token() -> None:
    decided = plan(HttpOptions(), settings())
    assert decided.tokens is None
    assert decided.security.enable_dns_rebinding_protection
    assert decided.security.allowed_hosts == ["127.0.0.1:*", "localhost:*", "[::1]:*"]


def test_a_public_address_without_allowed_hosts_is_refused() -> None:
    with pytest.raises(ConfigError, match="without COLIBRI_HTTP_ALLOWED_HOSTS"):
        plan(HttpOptions(host="0.0.0.0"), settings(http_tokens_file="/nonexistent"))


def test_a_public_address_without_tokens_is_refused_unless_insecure_no_auth() -> None:
    allowed = settings(http_allowed_hosts="router.example.com")
    with pytest.raises(ConfigError, match="--insecure-no-auth"):
        plan(HttpOptions(host="0.0.0.0"), allowed)
    decided = plan(HttpOptions(host="0.0.0.0", insecure_no_auth=True), allowed)
    assert decided.tokens is None
    assert decided.security.allowed_hosts == ["router.example.com", "router.example.com:*"]


def test_allowed_hosts_and_origins_are_what_the_settings_say(tmp_path: Path) -> None:
    add_token(tmp_path / "tokens", "alice")
    decided = plan(
        HttpOptions(host="0.0.0.0"),
        settings(
            http_allowed_hosts="a.example, b.example:8443,,[fd00::1]",
            http_allowed_origins="https://a.example",
            http_tokens_file=str(tmp_path / "tokens"),
        ),
    )
    assert decided.tokens is not None
    assert decided.security.allowed_hosts == ["a.example", "a.example:*", "b.example:8443", "[fd00::1]"]
    assert decided.security.allowed_origins == ["https://a.example"]


def test_a_tokens_file_without_tokens_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text("# nobody yet\n")
    with pytest.raises(ConfigError, match="has no token"):
        plan(HttpOptions(), settings(http_tokens_file=str(tmp_path / "tokens")))


def test_a_path_must_be_absolute() -> None:
    with pytest.raises(ConfigError, match="--path"):
        plan(HttpOptions(path="mcp"), settings())


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "--port", "9000"], "need --http"),
        (["serve", "--insecure-no-auth"], "need --http"),
        (["serve", "--http", "--workers", "0"], "--workers must be at least 1"),
        (["serve", "--http", "--port", "70000"], "--port within 0-65535"),
    ],
)
def test_the_command_line_refuses_options_that_cannot_apply(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from colibri_router.cli import main

    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_a_database_this_install_cannot_use_is_refused_before_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "asyncpg" else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'colibri-router\[postgres\]'"):
        plan(HttpOptions(), settings(database_url="postgresql://u@127.0.0.1:5432/db"))
    with pytest.raises(ConfigError, match="COLIBRI_DATABASE_URL is not usable"):
        plan(HttpOptions(), settings(database_url="mysql://u@127.0.0.1/db"))
    assert plan(HttpOptions(), settings(database_url="postgresql://u@127.0.0.1:5432/db", store="off")).tokens is None
