"""The team server's per-member policy end to end: the real ``serve --http`` process with a
``COLIBRI_HTTP_POLICY`` file, several members' tokens, the official MCP client, and the loopback fake
upstream counting what was really sent. Every rule is shown allowing and refusing; the file is
re-read while the server runs, and a bad one keeps the last good policy."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fake_upstream import FakeUpstream, anthropic_text, kimi_text
from harness import SERVER_COMMAND
from http_harness import http_server, http_session, tokens_for
from mcp import ClientSession
from mcp.types import CallToolResult

pytestmark = pytest.mark.e2e

POLICY = """
[defaults]
tools = ["router_call", "router_ask_many", "router_models", "router_usage"]

[members.kim]
models = ["kimi*"]
rpm = 10

[members.ann]
providers = ["claude*"]
tools = ["router_call"]
files = false
agent_cli = false
max_cost_usd_per_call = 0.01
daily_usd = 100
monthly_usd = 100

[members.tok]
tpm = 3000

[members.broke]
daily_usd = 0

[members.broke_month]
monthly_usd = 0
"""
MEMBERS = ("kim", "ann", "tok", "broke", "broke_month", "eve")


@pytest.fixture
def team(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The members' tokens; the server's environment gets the tokens file and the policy file."""
    server_env["COLIBRI_HTTP_TOKENS_FILE"] = str(tmp_path / "tokens")
    server_env["COLIBRI_HTTP_POLICY"] = str(tmp_path / "policy.toml")
    _write_policy(tmp_path / "policy.toml", POLICY, 1)
    return tokens_for(tmp_path / "tokens", *MEMBERS)


def _write_policy(path: Path, text: str, version: int) -> None:
    path.write_text(text, encoding="utf-8")
    stamp = 1_700_000_000_000_000_000 + version * 1_000_000_000
    os.utime(path, ns=(stamp, stamp))  # a new modification time whatever the file system's resolution


def _error(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, result.content
    error: dict[str, Any] = (result.structured_content or {})["error"]
    return error


def _sent(fake: FakeUpstream) -> int:
    return len(fake.kimi.requests) + len(fake.anthropic.requests)


async def _call(session: ClientSession, **arguments: Any) -> CallToolResult:
    return await session.call_tool("router_call", {"prompt": "hi", **arguments})


async def test_a_member_limited_to_kimi_at_10_rpm_is_refused_gpt_and_its_eleventh_call(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, team: dict[str, str]
) -> None:
    fake_upstream.kimi.enqueue(*[kimi_text(f"ok {n}") for n in range(9)])
    fake_upstream.anthropic.enqueue(anthropic_text("ann's answer"))
    with http_server(server_env, server_log) as url:
        async with http_session(url, team["kim"]) as kim:
            gpt = await _call(kim, model="gpt")
            allowed = [await _call(kim, model="kimi") for _ in range(9)]
            eleventh = await _call(kim, model="kimi")
        async with http_session(url, team["ann"]) as ann:  # another member has a minute of their own
            other = await _call(ann, model="sonnet", max_tokens=100)
    refused = _error(gpt)
    assert refused["code"] == "NOT_ALLOWED" and refused["kind"] == "NOT_ALLOWED" and refused["retryable"] is False
    assert "openai:gpt-5.5" in refused["message"] and "models: kimi*" in refused["message"]
    assert all(not result.is_error for result in allowed)
    limited = _error(eleventh)
    assert (limited["code"], limited["kind"], limited["retryable"]) == ("POLICY_RATE_LIMITED", "RATE_LIMITED", True)
    assert 0 < limited["retry_after_s"] <= 60
    assert "rpm 10" in limited["message"]
    assert not other.is_error, other.content
    assert len(fake_upstream.kimi.requests) == 9  # neither gpt nor the eleventh call was sent
    assert len(fake_upstream.anthropic.requests) == 1


async def test_tools_list_and_router_models_show_a_member_only_what_it_may_use(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, team: dict[str, str]
) -> None:
    with http_server(server_env, server_log) as url:
        async with http_session(url, team["kim"]) as kim:
            kim_tools = {tool.name for tool in (await kim.list_tools()).tools}
            models = (await kim.call_tool("router_models", {})).structured_content or {}
        async with http_session(url, team["ann"]) as ann:
            ann_tools = {tool.name for tool in (await ann.list_tools()).tools}
            hidden = await ann.call_tool("router_models", {})
            hidden_invalid = await ann.call_tool("router_usage", {"since": "never"})
    assert kim_tools == {"router_call", "router_ask_many", "router_models", "router_usage"}
    assert ann_tools == {"router_call"}
    assert _error(hidden)["code"] == "NOT_ALLOWED" and "router_models" in _error(hidden)["message"]
    assert _error(hidden_invalid)["code"] == "NOT_ALLOWED"  # hidden before its arguments are read
    listed = [model for provider in models["providers"] for model in provider["models"]]
    assert listed and all(model.startswith("kimi") for model in listed)
    assert "gpt-5.5" not in listed
    assert models["aliases"] and all(
        target.split(":", 1)[1].startswith("kimi") for target in models["aliases"].values()
    )
    assert _sent(fake_upstream) == 0


async def test_fallbacks_and_ask_many_are_checked_before_anything_is_sent(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, team: dict[str, str]
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("first"), kimi_text("second"))
    with http_server(server_env, server_log) as url:
        async with http_session(url, team["kim"]) as kim:
            fallback = await _call(kim, model="kimi", fallback=["sonnet"])
            many = await kim.call_tool("router_ask_many", {"prompt": "hi", "models": ["kimi", "sonnet"]})
            judged = await kim.call_tool(
                "router_ask_many", {"prompt": "hi", "models": ["kimi", "kimi-thinking"], "judge": "gpt"}
            )
            both_kimi = await kim.call_tool("router_ask_many", {"prompt": "hi", "models": ["kimi", "kimi-thinking"]})
    for refused, model in ((fallback, "claude-sonnet-4-5"), (many, "claude-sonnet-4-5"), (judged, "gpt-5.5")):
        assert _error(refused)["code"] == "NOT_ALLOWED" and model in _error(refused)["message"]
    assert not both_kimi.is_error, both_kimi.content
    assert len(fake_upstream.kimi.requests) == 2 and len(fake_upstream.anthropic.requests) == 0


async def test_providers_files_agent_cli_and_the_cost_per_call(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, team: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "served"
    root.mkdir()
    (root / "notes.md").write_text("shared notes\n", encoding="utf-8")
    server_env["COLIBRI_HTTP_FILES_ROOT"] = str(root)
    fake_upstream.anthropic.enqueue(anthropic_text("cheap"))
    fake_upstream.kimi.enqueue(kimi_text("read it"), kimi_text("big"))
    with http_server(server_env, server_log) as url:
        async with http_session(url, team["ann"]) as ann:
            provider = await _call(ann, model="kimi")
            files = await _call(ann, model="sonnet", max_tokens=100, files=["notes.md"])
            agent = await _call(ann, provider="claude-code")
            costly = await _call(ann, model="sonnet", max_tokens=2000)
            cheap = await _call(ann, model="sonnet", max_tokens=100)
        async with http_session(url, team["eve"]) as eve:  # the defaults: no such rule
            eve_files = await _call(eve, model="kimi", files=["notes.md"])
            eve_agent = await _call(eve, provider="claude-code")
            eve_big = await _call(eve, model="kimi", max_tokens=2000)
    assert "provider 'kimi'" in _error(provider)["message"] and "providers: claude*" in _error(provider)["message"]
    assert "files = false" in _error(files)["message"]
    assert "agent_cli = false" in _error(agent)["message"]
    assert "max_cost_usd_per_call $0.01" in _error(costly)["message"]
    assert all(_error(result)["code"] == "NOT_ALLOWED" for result in (provider, files, agent, costly))
    assert not cheap.is_error, cheap.content
    assert not eve_files.is_error, eve_files.content
    assert (eve_files.structured_content or {})["files_read"][0]["path"] == "notes.md"
    # Past the policy, the server's own setting still applies: no agent over HTTP without COLIBRI_HTTP_AGENT_CLI.
    assert _error(eve_agent)["code"] != "NOT_ALLOWED" and "COLIBRI_HTTP_AGENT_CLI" in _error(eve_agent)["message"]
    assert not eve_big.is_error, eve_big.content
    assert len(fake_upstream.anthropic.requests) == 1 and len(fake_upstream.kimi.requests) == 2


async def test_tokens_per_minute_are_estimated_then_settled(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, team: dict[str, str]
) -> None:
    fake_upstream.kimi.enqueue(*[kimi_text("ok", usage=(20, 10)) for _ in range(3)], kimi_text("slow", delay_s=3))
    with http_server(server_env, server_log) as url:
        async with http_session(url, team["tok"]) as tok:
            # Each estimate is ~1,410 tokens: three fit in 3,000 only because each is settled to 30.
            settled = [await _call(tok, model="kimi", max_tokens=1400) for _ in range(3)]
            too_big = await _call(tok, model="kimi", max_tokens=5000)
            outcomes: dict[str, CallToolResult] = {}

            async def held() -> None:
                outcomes["held"] = await _call(tok, model="kimi", max_tokens=2000)

            async with anyio.create_task_group() as group:
                group.start_soon(held)
                with anyio.fail_after(20):
                    # The held call is upstream, its estimate counted (the fake records in its own threads).
                    while len(fake_upstream.kimi.requests) < 4:  # noqa: ASYNC110
                        await anyio.sleep(0.02)
                outcomes["over"] = await _call(tok, model="kimi", max_tokens=2000)
    assert all(not result.is_error for result in settled)
    assert _error(too_big)["code"] == "NOT_ALLOWED" and "tpm 3000" in _error(too_big)["message"]
    assert not outcomes["held"].is_error
    over = _error(outcomes["over"])
    assert (over["code"], over["kind"]) == ("POLICY_RATE_LIMITED", "RATE_LIMITED")
    assert "tpm 3000" in over["message"] and 0 < over["retry_after_s"] <= 60
    assert len(fake_upstream.kimi.requests) == 4


async def test_a_members_daily_and_monthly_budgets(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, team: dict[str, str]
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("within"))
    with http_server(server_env, server_log) as url:
        async with http_session(url, team["broke"]) as broke:
            daily = await _call(broke, model="kimi")
        async with http_session(url, team["broke_month"]) as broke_month:
            monthly = await _call(broke_month, model="kimi")
        async with http_session(url, team["kim"]) as kim:
            within = await _call(kim, model="kimi")
    assert _error(daily)["code"] == "BUDGET_EXCEEDED" and "daily budget per caller" in _error(daily)["message"]
    assert _error(monthly)["code"] == "BUDGET_EXCEEDED" and "monthly budget per caller" in _error(monthly)["message"]
    assert not within.is_error
    assert len(fake_upstream.kimi.requests) == 1


async def test_the_file_is_re_read_and_a_bad_one_keeps_the_last_good_policy(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, team: dict[str, str]
) -> None:
    policy = Path(server_env["COLIBRI_HTTP_POLICY"])
    fake_upstream.anthropic.enqueue(anthropic_text("now allowed"), anthropic_text("still allowed"))
    with http_server(server_env, server_log) as url:
        async with http_session(url, team["kim"]) as kim:
            before = await _call(kim, model="sonnet")
            _write_policy(policy, POLICY.replace('models = ["kimi*"]', 'models = ["kimi*", "claude*"]'), 2)
            after = await _call(kim, model="sonnet")
            _write_policy(policy, POLICY.replace("rpm = 10", "rpm = 'ten'"), 3)
            kept = await _call(kim, model="sonnet")
            async with httpx.AsyncClient() as client:
                ready = await client.get(url.replace("/mcp", "/readyz"))
            doctor = await anyio.run_process(
                [SERVER_COMMAND, "doctor", "--http", "--json"], env=server_env, check=False
            )
    assert _error(before)["code"] == "NOT_ALLOWED"
    assert not after.is_error, after.content
    assert not kept.is_error, kept.content  # the last good policy: claude still allowed
    assert ready.status_code == 200
    log = server_log.read_text()
    assert "policy file invalid: keeping the last good policy" in log and "rpm must be a whole number" in log
    report = json.loads(doctor.stdout.decode())
    assert doctor.returncode == 1
    assert report["http"]["policy_file"] == str(policy)
    assert any("rpm must be a whole number" in problem for problem in report["problems"])
    assert len(fake_upstream.anthropic.requests) == 2


def test_serve_refuses_to_start_on_a_bad_policy_file(
    server_env: dict[str, str], server_log: Path, team: dict[str, str]
) -> None:
    _write_policy(Path(server_env["COLIBRI_HTTP_POLICY"]), "[members.kim]\nrmp = 10\n", 4)
    done = subprocess.run(
        [SERVER_COMMAND, "serve", "--http", "--port", "1"],
        env=server_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "unknown key 'rmp'" in done.stderr
