"""The per-member policy across two replicas: two ``serve --http`` processes sharing one real
PostgreSQL database (the throwaway cluster of ``postgres_cluster``) hold one member's ``rpm`` and
``daily_usd`` exactly, whichever replica each call reaches."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from fake_upstream import FakeUpstream, kimi_text
from http_harness import http_server, http_session, tokens_for

from colibri_router.pricing import worst_case_cost
from colibri_router.providers import BUILTIN
from colibri_router.router import build_request
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput
from colibri_router.store import micro_to_usd, usd_to_micro
from colibri_router.token_estimate import request_tokens

pytestmark = pytest.mark.e2e

MODEL = "kimi-k2-0905-preview"
CALL = {"prompt": "spend", "model": MODEL, "max_tokens": 1000}
CALLS_PER_REPLICA = 8


@pytest.fixture
def team_env(server_env: dict[str, str], tmp_path: Path, fresh_postgres_database: Callable[[], str]) -> dict[str, str]:
    server_env["COLIBRI_DATABASE_URL"] = fresh_postgres_database()
    server_env["COLIBRI_HTTP_TOKENS_FILE"] = str(tmp_path / "tokens")
    server_env["COLIBRI_HTTP_POLICY"] = str(tmp_path / "policy.toml")
    return server_env


async def _spread(urls: list[str], token: str, calls_per_replica: int) -> list[str]:
    """Every call at once, half on each replica; the outcome codes."""
    outcomes: list[str] = []

    async def spend(url: str) -> None:
        async with http_session(url, token) as session, anyio.create_task_group() as calls:
            for _ in range(calls_per_replica):
                calls.start_soon(one, session)

    async def one(session: object) -> None:
        result = await session.call_tool("router_call", CALL)  # type: ignore[attr-defined]
        outcomes.append((result.structured_content or {})["error"]["code"] if result.is_error else "ok")

    async with anyio.create_task_group() as replicas:
        for url in urls:
            replicas.start_soon(spend, url)
    return outcomes


async def test_two_replicas_hold_one_members_rpm_exactly(
    fake_upstream: FakeUpstream, team_env: dict[str, str], tmp_path: Path
) -> None:
    Path(team_env["COLIBRI_HTTP_POLICY"]).write_text("[members.kim]\nrpm = 10\n", encoding="utf-8")
    token = tokens_for(Path(team_env["COLIBRI_HTTP_TOKENS_FILE"]), "kim")["kim"]
    fake_upstream.kimi.enqueue(*[kimi_text("ok") for _ in range(10)])
    with (
        http_server(team_env, tmp_path / "a.log") as first,
        http_server(team_env, tmp_path / "b.log") as second,
    ):
        outcomes = await _spread([first, second], token, CALLS_PER_REPLICA)
    assert outcomes.count("ok") == 10
    assert outcomes.count("POLICY_RATE_LIMITED") == 2 * CALLS_PER_REPLICA - 10
    assert len(fake_upstream.kimi.requests) == 10


async def test_two_replicas_hold_one_members_daily_budget_exactly(
    fake_upstream: FakeUpstream, team_env: dict[str, str], tmp_path: Path
) -> None:
    request, _ = build_request(call_from(RouterCallInput.model_validate(CALL)), MODEL)
    cost = worst_case_cost(BUILTIN["kimi"].price_provider, MODEL, request_tokens(request), 1000)
    assert cost is not None and cost > 0
    estimate = usd_to_micro(cost)
    # Room for 5.5 worst cases: exactly 6 calls find the member's spend still below it.
    daily = micro_to_usd(estimate * 5 + estimate // 2)
    Path(team_env["COLIBRI_HTTP_POLICY"]).write_text(f"[members.kim]\ndaily_usd = {daily:.6f}\n", encoding="utf-8")
    tokens = tokens_for(Path(team_env["COLIBRI_HTTP_TOKENS_FILE"]), "kim", "ann")
    # Every admitted call waits upstream, so all are decided while none has settled yet.
    fake_upstream.kimi.enqueue(*[kimi_text("ok", delay_s=4) for _ in range(7)])
    with (
        http_server(team_env, tmp_path / "a.log") as first,
        http_server(team_env, tmp_path / "b.log") as second,
    ):
        outcomes = await _spread([first, second], tokens["kim"], CALLS_PER_REPLICA)
        async with http_session(second, tokens["ann"]) as ann:  # no budget of their own
            other = await ann.call_tool("router_call", CALL)
    assert outcomes.count("ok") == 6
    assert outcomes.count("BUDGET_EXCEEDED") == 2 * CALLS_PER_REPLICA - 6
    assert not other.is_error
    assert len(fake_upstream.kimi.requests) == 7
