"""What /readyz answers: ready with a reachable store (or none), not ready while the store fails or
does not answer, and one check shared by the probes of a second."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from colibri_router.errors import RETRYABLE_KINDS, ColibriError
from colibri_router.server import readiness as readiness_module
from colibri_router.server.http import HttpOptions, build_app, plan
from colibri_router.server.readiness import Readiness
from colibri_router.settings import load_settings
from colibri_router.store import StoreError


class CountingStore:
    """A store whose check fails, hangs or passes as the test says, counting the checks."""

    location = "test-store"

    def __init__(self) -> None:
        self.checks = 0
        self.failure: BaseException | None = None
        self.hang = False

    async def check(self) -> None:
        self.checks += 1
        if self.hang:
            await anyio.sleep_forever()
        if self.failure is not None:
            raise StoreError(self.location, self.failure)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> CountingStore:
    fake = CountingStore()
    monkeypatch.setattr(readiness_module, "shared_store", lambda _settings: fake)
    return fake


async def test_ready_while_the_store_answers_and_not_while_it_fails(store: CountingStore) -> None:
    readiness = Readiness(reuse_s=0)
    assert await readiness.problem() is None
    store.failure = ConnectionRefusedError("connection refused")
    assert await readiness.problem() == "store unavailable"
    store.failure = None
    assert await readiness.problem() is None
    assert store.checks == 3


async def test_a_store_that_does_not_answer_is_not_ready(store: CountingStore) -> None:
    store.hang = True
    with anyio.fail_after(5):
        assert await Readiness(reuse_s=0, timeout_s=0.05).problem() == "store unavailable"


async def test_probes_within_a_second_share_one_check(store: CountingStore) -> None:
    readiness = Readiness(reuse_s=60)
    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(readiness.problem)
    assert store.checks == 1


async def test_with_the_store_off_it_is_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_STORE", "off")
    assert await Readiness().problem() is None


async def test_unusable_settings_are_not_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_TIMEOUT_S", "abc")
    assert await Readiness().problem() == "settings unusable"


async def test_a_real_sqlite_store_that_cannot_be_opened_is_not_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("a file where the state directory should be")
    monkeypatch.setenv("COLIBRI_STATE_DIR", str(tmp_path / "file" / "state"))
    assert await Readiness().problem() == "store unavailable"
    monkeypatch.setenv("COLIBRI_STATE_DIR", str(tmp_path / "state"))
    assert await Readiness(reuse_s=0).problem() is None
    assert (tmp_path / "state" / "colibri.db").exists()


def test_a_store_failure_is_the_store_unavailable_kind_and_worth_retrying_later() -> None:
    error = StoreError("somewhere", OSError("gone"))
    assert isinstance(error, ColibriError)
    assert (error.code, error.kind, error.retryable_later) == ("STORE_ERROR", "STORE_UNAVAILABLE", True)
    assert "STORE_UNAVAILABLE" in RETRYABLE_KINDS


async def test_readyz_answers_without_a_token_and_says_503_while_not_ready(
    store: CountingStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from colibri_router.tokens import add_token

    add_token(tmp_path / "tokens", "alice")
    monkeypatch.setenv("COLIBRI_HTTP_TOKENS_FILE", str(tmp_path / "tokens"))
    options = HttpOptions()
    app = build_app(options, plan(options, load_settings()))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        ready = await client.get("/readyz")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
        store.failure = OSError("down")
        await anyio.sleep(readiness_module.REUSE_S)
        down: Any = await client.get("/readyz")
        assert (down.status_code, down.json()) == (503, {"status": "unavailable", "problem": "store unavailable"})
        assert (await client.post("/mcp", json={})).status_code == 401  # the MCP endpoint still needs one
