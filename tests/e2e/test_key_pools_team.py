"""Two ``serve --http`` replicas on one PostgreSQL database share the pool keys they set aside
(docs/keys.md): a key rate limited on one is not sent by the other, and /metrics names it by
fingerprint only."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
import pytest
from fake_upstream import FakeUpstream, error, request_key
from harness import SERVER_COMMAND
from http_harness import http_server, http_session

from colibri_router.engine.keys import fingerprint

pytestmark = pytest.mark.e2e

K1, K2, K3 = "team-pool-key-one-6e1f", "team-pool-key-two-2a9c", "team-pool-key-three-8d3b"
CALL = {"prompt": "hi", "model": "gemini-3.5-flash", "timeout_s": 10}
DAILY_QUOTA = {
    "details": [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
        }
    ]
}


async def test_a_key_set_aside_on_one_replica_is_skipped_by_the_other(
    fake_upstream: FakeUpstream, server_env: dict[str, str], tmp_path: Path, fresh_postgres_database: Callable[[], str]
) -> None:
    env = {
        **server_env,
        "COLIBRI_DATABASE_URL": fresh_postgres_database(),
        "GEMINI_API_KEY": f"{K1},{K2},{K3}",
        "GEMINI_BASE_URL": fake_upstream.base_url("gemini"),
        "COLIBRI_METRICS_PUBLIC": "1",
    }
    fake_upstream.gemini.enqueue_for_key(K1, error(429, message="slow down", headers={"Retry-After": "60"}))
    with (
        http_server(env, tmp_path / "a.log") as first,
        http_server(env, tmp_path / "b.log") as second,
    ):
        async with http_session(first) as on_first:
            answered_first = await on_first.call_tool("router_call", CALL)
        async with http_session(second) as on_second:
            # A new replica starts with the first key in turn: k1, which the other set aside.
            answered_second = await on_second.call_tool("router_call", CALL)
        async with httpx.AsyncClient(timeout=10) as client:
            metrics = (await client.get(first.removesuffix("/mcp") + "/metrics")).text
    logs = (tmp_path / "a.log").read_text() + (tmp_path / "b.log").read_text()

    assert not answered_first.is_error and not answered_second.is_error
    assert [request_key(r) for r in fake_upstream.gemini.requests] == [K1, K2, K2]
    assert (answered_second.structured_content or {})["attempts"][0]["key"] == fingerprint("gemini", K2)
    assert f'key="{fingerprint("gemini", K1)}",provider="gemini",reason="rate_limited"' in metrics
    for key in (K1, K2, K3):
        assert key not in metrics + logs


async def test_doctor_on_the_team_database_shows_the_keys_the_replicas_set_aside(
    fake_upstream: FakeUpstream, server_env: dict[str, str], tmp_path: Path, fresh_postgres_database: Callable[[], str]
) -> None:
    url = fresh_postgres_database()
    env = {
        **server_env,
        "COLIBRI_DATABASE_URL": url,
        "GEMINI_API_KEY": f"{K1},{K2},{K3}",
        "GEMINI_BASE_URL": fake_upstream.base_url("gemini"),
    }
    fake_upstream.gemini.enqueue_for_key(K2, error(429, message="quota", extra=DAILY_QUOTA))
    with http_server(env, tmp_path / "a.log") as first:
        async with http_session(first) as session:
            await session.call_tool("router_call", CALL)  # k1 answers
            await session.call_tool("router_call", CALL)  # k2 is out of quota: k3 answers

    done = await anyio.run_process(
        [SERVER_COMMAND, "doctor", "--json"], env=env, check=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    output = done.stdout.decode() + done.stderr.decode()
    gemini = next(p for p in json.loads(done.stdout)["providers"] if p["name"] == "gemini")

    assert [(k["fingerprint"], k["state"]) for k in gemini["keys"]] == [
        (fingerprint("gemini", K1), "usable"),
        (fingerprint("gemini", K2), "out_of_quota"),
        (fingerprint("gemini", K3), "usable"),
    ]
    assert 3500 < gemini["keys"][1]["seconds_left"] <= 3600
    assert "(3 keys, 2 usable)" in gemini["summary"]
    for key in (K1, K2, K3):
        assert key not in output
