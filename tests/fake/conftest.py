"""Fixtures for the fake upstream's own tests."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fake_upstream import FakeUpstream


@pytest.fixture
def client(fake_upstream: FakeUpstream) -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5) as client:
        yield client
