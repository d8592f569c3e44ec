"""Fixtures shared by every test: the loopback fake upstream, and the guards each test runs under.

Guards (autouse): a developer's real keys and proxy settings are removed from the environment, state
and config directories point at temp dirs, and name resolution is refused for anything but loopback,
so no test can reach a real provider or the developer's files.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from fake_upstream import FakeUpstream  # importable everywhere: pyproject sets pythonpath = ["tests"]
from hypothesis import settings
from result_schemas import install as check_every_tool_result

# No per-example deadline: the suite runs its tests in parallel workers (pytest-xdist) beside servers and
# subprocesses, and a test here never asserts how long something takes (benchmarks/ measures that).
settings.register_profile("colibri", deadline=None)
settings.load_profile("colibri")

pytest_plugins = ["postgres_cluster"]  # the throwaway PostgreSQL server's fixtures, for every directory

_SECRET_PREFIXES = ("COLIBRI_", "ANTHROPIC_", "MOONSHOT_", "KIMI_")
_PROXY_VARIABLES = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"}


@pytest.fixture(autouse=True, scope="session")
def _tool_results_match_their_output_schemas() -> Iterator[None]:
    """Every tool result a test receives, error or not, is checked against its tool's output schema
    from tools/list, as the official TypeScript client does (tests/result_schemas.py)."""
    stop = check_every_tool_result()
    yield
    stop()


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Each test starts with logging unconfigured: a test that configures it (often onto a capture
    stream that is closed afterwards) must not decide where the next test's lines go."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
    root.handlers, root.level = handlers, level


@pytest.fixture(autouse=True)
def _no_observability_sinks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Metrics or trace sinks a test installs (building an HTTP app installs the metrics) end with it."""
    from colibri_router import observability

    monkeypatch.setattr(observability, "_sinks", ())


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove provider settings, API keys and proxies that the developer's shell may carry."""
    from colibri_router.providers import BUILTIN

    registry_variables = {name for spec in BUILTIN.values() for name in (*spec.key_envs, spec.base_url_env)}
    for name in list(os.environ):
        upper = name.upper()
        if (
            upper.startswith(_SECRET_PREFIXES)
            or upper.endswith("_API_KEY")
            or upper in _PROXY_VARIABLES
            or upper in registry_variables
        ):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _private_state_and_config(
    _clean_environment: None, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The ledger, threads and config file of a test live in its own temp directories, never in the
    developer's home; each test starts with no store opened."""
    from colibri_router import store

    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("COLIBRI_STATE_DIR", str(home / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state-home"))
    monkeypatch.setattr(store, "_shared", {})


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse to resolve any host but loopback (every httpx connection resolves its host first)."""
    resolve = socket.getaddrinfo

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback(host):
            raise OSError(f"tests must not reach beyond loopback, refused to resolve {host!r}")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)


def _is_loopback(host: str | bytes | None) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not host or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture
def fake_upstream() -> Iterator[FakeUpstream]:
    """A started fake upstream on an ephemeral loopback port, stopped after the test."""
    with FakeUpstream() as fake:
        yield fake


@pytest.fixture
def fresh_key_pools() -> Iterator[None]:
    """Each provider's key pool (its turn and the keys set aside) made anew before and after the test."""
    from colibri_router.engine.keys import reset_pools

    reset_pools()
    yield
    reset_pools()
