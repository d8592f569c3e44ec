"""Fixtures for the end-to-end tests: the host environment and the server's stderr log."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_upstream import FakeUpstream
from harness import host_env


@pytest.fixture
def server_env(fake_upstream: FakeUpstream) -> dict[str, str]:
    return host_env(fake_upstream)


@pytest.fixture
def server_log(tmp_path: Path) -> Path:
    return tmp_path / "server-stderr.log"
