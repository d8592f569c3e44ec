"""A team deployment end to end: two ``serve --http`` processes on two ports sharing one real
PostgreSQL database (the throwaway cluster of ``postgres_cluster``), reached with the official
MCP client and bearer tokens."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fake_upstream import FakeUpstream, kimi_text
from http_harness import MCP_HEADERS, cancellation, http_server, http_session, tokens_for, tools_call

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
CALLS_PER_SERVER = 100
ADMITTED = 100


@pytest.fixture
def team_env(server_env: dict[str, str], tmp_path: Path, fresh_postgres_database: Callable[[], str]) -> dict[str, str]:
    server_env["COLIBRI_DATABASE_URL"] = fresh_postgres_database()
    server_env["COLIBRI_HTTP_TOKENS_FILE"] = str(tmp_path / "tokens")
    server_env["COLIBRI_HTTP_ADMINS"] = "ops"
    return server_env


def _worst_case_micro_usd() -> int:
    """What the router reserves for one ``CALL`` (the same functions it uses to admit a call)."""
    request, _ = build_request(call_from(RouterCallInput.model_validate(CALL)), MODEL)
    cost = worst_case_cost(BUILTIN["kimi"].price_provider, MODEL, request_tokens(request), 1000)
    assert cost is not None and cost > 0
    return usd_to_micro(cost)


async def test_a_thread_started_on_one_replica_continues_on_the_other(
    fake_upstream: FakeUpstream, team_env: dict[str, str], tmp_path: Path
) -> None:
    token = tokens_for(Path(team_env["COLIBRI_HTTP_TOKENS_FILE"]), "alice")["alice"]
    fake_upstream.kimi.enqueue(kimi_text("Noted: the code word is heron."), kimi_text("It was heron."))
    with (
        http_server(team_env, tmp_path / "a.log") as first,
        http_server(team_env, tmp_path / "b.log") as second,
    ):
        async with http_session(first, token) as on_first:
            started = await on_first.call_tool(
                "router_call", {"prompt": "remember the code word heron", "thread_id": "new"}
            )
        thread_id = (started.structured_content or {})["thread_id"]
        async with http_session(second, token) as on_second:
            continued = await on_second.call_tool(
                "router_call", {"prompt": "what was the code word?", "thread_id": thread_id}
            )
            stored = await on_second.call_tool("router_threads", {"action": "get", "thread_id": thread_id})
    assert (continued.structured_content or {})["content"] == "It was heron."
    sent = fake_upstream.kimi.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == "Noted: the code word is heron."
    assert len((stored.structured_content or {})["messages"]) == 4


async def test_two_replicas_admit_exactly_the_calls_one_budget_allows(
    fake_upstream: FakeUpstream, team_env: dict[str, str], tmp_path: Path
) -> None:
    # A daily budget with room for 99.5 worst cases: exactly 100 calls find it not yet reached.
    estimate = _worst_case_micro_usd()
    team_env["COLIBRI_BUDGET_DAILY_USD"] = f"{micro_to_usd(estimate * (ADMITTED - 1) + estimate // 2):.6f}"
    tokens = tokens_for(Path(team_env["COLIBRI_HTTP_TOKENS_FILE"]), "alice", "ops")
    # Every admitted call waits upstream, so all 200 are decided while none has settled yet.
    fake_upstream.kimi.enqueue(*[kimi_text("ok", delay_s=6) for _ in range(ADMITTED)])
    outcomes: list[str] = []

    async def spend(url: str) -> None:
        async with http_session(url, tokens["alice"]) as session, anyio.create_task_group() as calls:
            for _ in range(CALLS_PER_SERVER):
                calls.start_soon(_one_call, session, outcomes)

    with (
        http_server(team_env, tmp_path / "a.log") as first,
        http_server(team_env, tmp_path / "b.log") as second,
    ):
        async with anyio.create_task_group() as replicas:
            replicas.start_soon(spend, first)
            replicas.start_soon(spend, second)
        async with http_session(first, tokens["ops"]) as ops:
            usage = (await ops.call_tool("router_usage", {"since": "today"})).structured_content or {}
    assert outcomes.count("ok") == ADMITTED
    assert outcomes.count("BUDGET_EXCEEDED") == 2 * CALLS_PER_SERVER - ADMITTED
    assert len(fake_upstream.kimi.requests) == ADMITTED
    assert (usage["total"]["calls"], usage["total"]["errors"]) == (
        2 * CALLS_PER_SERVER,
        CALLS_PER_SERVER * 2 - ADMITTED,
    )


async def _one_call(session: Any, outcomes: list[str]) -> None:
    result = await session.call_tool("router_call", CALL)
    structured = result.structured_content or {}
    outcomes.append(structured["error"]["code"] if result.is_error else "ok")


async def test_a_cancellation_sent_to_the_other_replica_stops_the_call(
    fake_upstream: FakeUpstream, team_env: dict[str, str], tmp_path: Path
) -> None:
    token = tokens_for(Path(team_env["COLIBRI_HTTP_TOKENS_FILE"]), "alice")["alice"]
    fake_upstream.kimi.enqueue(kimi_text("too late", hold_open_s=30))
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    call, cancel = tools_call(7, {"prompt": "long"}), cancellation(7)
    with (
        http_server(team_env, tmp_path / "a.log") as first,
        http_server(team_env, tmp_path / "b.log") as second,
    ):
        async with httpx.AsyncClient(timeout=30) as client, client.stream("POST", first, json=call, headers=headers):
            with anyio.fail_after(10):
                while not fake_upstream.kimi.requests:  # noqa: ASYNC110 - the fake records in its own threads
                    await anyio.sleep(0.02)
            assert (await client.post(second, json=cancel, headers=headers)).status_code == 202
            cancelled_at = time.monotonic()
            disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)
    assert disconnect is not None, "the call on the first replica was not cancelled"
    assert disconnect.at - cancelled_at < 1.0
