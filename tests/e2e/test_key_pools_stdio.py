"""Several keys per provider end to end (issue 36 §1): the real server over stdio with
``GEMINI_API_KEY=k1,k2,k3``, k1 rate limited and k2 out of quota, answers from k3 at once, with warnings,
attempts, ledger and thread naming keys by fingerprint, and no key anywhere; ``doctor`` lists the keys
by fingerprint with their state."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, error, gemini_text, request_key
from harness import SERVER_COMMAND, host_env, router_session

from colibri_router.engine.keys import fingerprint

pytestmark = pytest.mark.e2e

K1, K2, K3 = "pool-e2e-key-one-4c1d8e2f", "pool-e2e-key-two-7a9b3c5d", "pool-e2e-key-three-1e6f0a9b"
KEYS = (K1, K2, K3)
DAILY_QUOTA = {
    "details": [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
        }
    ]
}


def fp(key: str) -> str:
    return fingerprint("gemini", key)


def pool_env(fake_upstream: FakeUpstream) -> dict[str, str]:
    return {
        **host_env(fake_upstream),
        "GEMINI_API_KEY": ",".join(KEYS),
        "GEMINI_BASE_URL": fake_upstream.base_url("gemini"),
    }


def assert_no_key(text: str) -> None:
    for key in KEYS:
        assert key not in text


async def test_a_rate_limited_and_an_exhausted_key_leave_the_third_to_answer_at_once(
    fake_upstream: FakeUpstream, server_log: Path
) -> None:
    gemini = fake_upstream.gemini
    gemini.enqueue_for_key(K1, error(429, message=f"slow down, {K1}", headers={"Retry-After": "20"}))
    gemini.enqueue_for_key(K2, error(429, message="You exceeded your current quota.", extra=DAILY_QUOTA))
    gemini.enqueue_for_key(K3, gemini_text("from the third key", model="gemini-3.5-flash"))
    # The next call finds k1 and k2 set aside, and k3 is refused: every key is set aside.
    gemini.enqueue_for_key(K3, error(401, message=f"API key {K3} expired"))
    outputs: list[Any] = []

    async with router_session(pool_env(fake_upstream), server_log) as session:
        first = await session.call_tool(
            "router_call", {"prompt": "hi", "model": "gemini-3.5-flash", "thread_id": "new", "timeout_s": 5}
        )
        # Within 5 s: the soonest key returns in 20 s, too late to be waited for.
        again = {"model": "gemini-3.5-flash", "timeout_s": 5}
        second = await session.call_tool("router_call", {"prompt": "again", **again})
        third = await session.call_tool("router_call", {"prompt": "and again", **again})
        models = await session.call_tool("router_models", {"provider": "gemini"})
        usage = await session.call_tool("router_usage", {})
        threads = await session.call_tool("router_threads", {})
        for result in (first, second, third, models, usage, threads):
            outputs.append(result.structured_content)
            outputs.append([getattr(block, "text", "") for block in result.content])

    answer = first.structured_content
    assert answer is not None and not first.is_error
    assert answer["content"] == "from the third key"
    assert [w for w in answer["warnings"] if w.startswith("key ")] == [
        f"key {fp(K1)} rate-limited: set aside for 20 s",
        f"key {fp(K2)} out of quota: set aside for 60 min",
    ]
    assert answer["attempts"] == [
        {
            "provider": "gemini",
            "model": "gemini-3.5-flash",
            "outcome": "ok",
            "kind": None,
            "latency_ms": answer["attempts"][0]["latency_ms"],
            "key": fp(K3),
        }
    ]
    assert [request_key(r) for r in gemini.requests[:3]] == [K1, K2, K3]
    # The second call: k3 is rejected, k1 and k2 still set aside: every key is, the call fails.
    failed = second.structured_content
    assert second.is_error and failed is not None
    assert failed["error"]["kind"] == "RATE_LIMITED"
    assert 0 < failed["error"]["retry_after_s"] <= 20
    assert f"{fp(K3)} rejected as invalid" in failed["error"]["message"]
    assert third.is_error and third.structured_content["error"]["kind"] == "RATE_LIMITED"
    assert len(gemini.requests) == 4  # the third call asked no one
    listing = models.structured_content["providers"][0]
    assert (listing["keys"], listing["keys_usable"]) == (3, 0)

    database = sqlite3.connect(Path(host_env(fake_upstream)["COLIBRI_STATE_DIR"]) / "colibri.db")
    rows = database.execute("SELECT outcome, kind, key_fingerprint FROM ledger ORDER BY at_ms").fetchall()
    stored = json.dumps(database.execute("SELECT * FROM thread_messages").fetchall())
    everything = [*database.execute("SELECT * FROM ledger").fetchall()]
    database.close()
    assert rows[0] == ("ok", None, fp(K3))
    assert rows[1][1] == "RATE_LIMITED" and rows[1][2] is not None and rows[1][2].startswith("gemini#")
    assert_no_key(json.dumps(outputs) + stored + json.dumps(everything) + server_log.read_text())
    assert fp(K1) in server_log.read_text()  # the log names the key set aside, by fingerprint
    assert fake_upstream.violations == []


def doctor(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [SERVER_COMMAND, "doctor", "--json", *args], env=env, check=False, capture_output=True, text=True, timeout=120
    )
    assert_no_key(done.stdout + done.stderr)
    document: dict[str, Any] = json.loads(done.stdout)
    return next(entry for entry in document["providers"] if entry["name"] == "gemini")


def test_doctor_lists_each_key_by_fingerprint_with_its_state(fake_upstream: FakeUpstream) -> None:
    env = pool_env(fake_upstream)
    fake_upstream.gemini.enqueue_for_key(K2, error(401, message="API key not valid"), endpoint="models")

    offline = doctor(env)
    live = doctor(env, "--live")

    assert offline["keys"] == [{"fingerprint": fp(key), "state": "usable", "seconds_left": None} for key in KEYS]
    assert "(3 keys, 3 usable)" in offline["summary"]
    assert [(k["fingerprint"], k["state"], k["live"]) for k in live["keys"]] == [
        (fp(K1), "usable", "ok"),
        (fp(K2), "invalid", "AUTH_FAILED"),
        (fp(K3), "usable", "ok"),
    ]
    assert f"keys refused: {fp(K2)} (AUTH_FAILED)" in live["summary"]
    assert live["live"]["ok"] is True
