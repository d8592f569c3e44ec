"""Jobs on a team server (docs/jobs.md): two ``serve --http`` replicas on one PostgreSQL database,
reached with the official MCP client and two members' tokens. A job belongs to its member; any
replica answers for it, and a cancel sent to the other replica stops it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_upstream import FakeUpstream, anthropic_text, kimi_text
from http_harness import http_server, http_session, tokens_for

pytestmark = pytest.mark.e2e

SONNET, KIMI = "claude-sonnet-4-5", "kimi-k2.6"


@pytest.fixture
def team_env(server_env: dict[str, str], tmp_path: Path, fresh_postgres_database: Callable[[], str]) -> dict[str, str]:

    server_env["COLIBRI_DATABASE_URL"] = fresh_postgres_database()
    server_env["COLIBRI_HTTP_TOKENS_FILE"] = str(tmp_path / "tokens")
    server_env["COLIBRI_HANDOFF_S"] = "1"
    return server_env


def _structured(result: Any) -> dict[str, Any]:
    assert result.structured_content is not None
    return result.structured_content  # type: ignore[no-any-return]


async def test_a_job_is_its_members_and_any_replica_answers_for_it(
    fake_upstream: FakeUpstream, team_env: dict[str, str], tmp_path: Path
) -> None:
    tokens = tokens_for(Path(team_env["COLIBRI_HTTP_TOKENS_FILE"]), "alice", "bob")
    fake_upstream.anthropic.enqueue(anthropic_text("from sonnet", delay_s=2.5))
    fake_upstream.kimi.enqueue(kimi_text("from kimi", model="kimi-k2-0905-preview", delay_s=2.0))
    arguments = {"prompt": "q", "models": [SONNET, "kimi"]}
    with (
        http_server(team_env, tmp_path / "a.log") as first,
        http_server(team_env, tmp_path / "b.log") as second,
    ):
        async with http_session(first, tokens["alice"]) as alice_first:
            handle = await alice_first.call_tool("router_ask_many", arguments)
        job_id = _structured(handle)["job_id"]
        async with http_session(second, tokens["bob"]) as bob_second:
            bobs = await bob_second.call_tool("router_job", {"job_id": job_id, "wait_s": 0})
            unknown = await bob_second.call_tool("router_job", {"job_id": "job_never_was", "wait_s": 0})
            bobs_list = await bob_second.call_tool("router_job", {})
        async with http_session(second, tokens["alice"]) as alice_second:
            final = await alice_second.call_tool("router_job", {"job_id": job_id, "wait_s": 30})
            alices_list = await alice_second.call_tool("router_job", {})

    assert _structured(handle)["status"] == "running"
    # Another member's job reads exactly as an id that never existed.
    assert bobs.is_error and unknown.is_error
    assert _structured(bobs)["error"]["code"] == _structured(unknown)["error"]["code"] == "JOB_NOT_FOUND"
    assert _structured(bobs)["error"]["message"].replace(job_id, "ID") == _structured(unknown)["error"][
        "message"
    ].replace("job_never_was", "ID")
    assert _structured(bobs_list)["jobs"] == []
    assert not final.is_error
    assert [answer["content"] for answer in _structured(final)["answers"]] == ["from sonnet", "from kimi"]
    assert [(job["job_id"], job["status"]) for job in _structured(alices_list)["jobs"]] == [(job_id, "succeeded")]


async def test_a_cancel_sent_to_the_other_replica_stops_the_job(
    fake_upstream: FakeUpstream, team_env: dict[str, str], tmp_path: Path
) -> None:
    token = tokens_for(Path(team_env["COLIBRI_HTTP_TOKENS_FILE"]), "alice")["alice"]
    fake_upstream.kimi.enqueue(kimi_text("never", hold_open_s=30))
    with (
        http_server(team_env, tmp_path / "a.log") as first,
        http_server(team_env, tmp_path / "b.log") as second,
    ):
        async with http_session(first, token) as on_first:
            handle = await on_first.call_tool("router_call", {"prompt": "q", "background": True})
        job_id = _structured(handle)["job_id"]
        async with http_session(second, token) as on_second:
            cancelled = await on_second.call_tool("router_job", {"job_id": job_id, "cancel": True, "wait_s": 20})
        disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)

    assert cancelled.is_error
    assert _structured(cancelled)["error"]["code"] == "JOB_CANCELLED"
    assert disconnect is not None  # the replica running the job closed its upstream request
