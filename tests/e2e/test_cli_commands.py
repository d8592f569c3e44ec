"""The ``colibri-router`` subcommands as a user runs them: a real process, the loopback fake behind it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_upstream import FakeUpstream, anthropic_text, kimi_text, kimi_tool_calls
from harness import SERVER_COMMAND, host_env

pytestmark = pytest.mark.e2e

SCENARIO = {
    "colibri": 1,
    "name": "lookup",
    "models": ["kimi:kimi-k2-0905-preview"],
    "repeat": 2,
    "prompt": "Look up order 12345.",
    "tools": [
        {
            "name": "lookup_order",
            "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "responses": [{"when": {"order_id": "12345"}, "then": "shipped"}],
        }
    ],
    "expect": [{"type": "tool_called", "tool": "lookup_order"}, {"type": "final_text", "contains": ["shipped"]}],
}


def cli(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SERVER_COMMAND, *args], check=False, env=env, input=stdin, capture_output=True, text=True, timeout=60
    )


def script_runs(fake: FakeUpstream, runs: int, final: str = "It has shipped.") -> None:
    """Replies for ``runs`` runs in turn (the tests run them one at a time: ``--concurrency 1``)."""
    for _ in range(runs):
        fake.kimi.enqueue(
            kimi_tool_calls([("functions.lookup_order:0", "lookup_order", '{"order_id": "12345"}')]), kimi_text(final)
        )


def scenario_file(tmp_path: Path, **changes: Any) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({**SCENARIO, **changes}))
    return path


def test_run_records_then_replays_the_same_report_without_network(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    env = host_env(fake_upstream)
    script_runs(fake_upstream, 2)
    recording = tmp_path / "calls.jsonl"
    recorded = cli(
        env, "run", str(scenario_file(tmp_path)), "--format", "json", "--record", str(recording), "--concurrency", "1"
    )
    assert recorded.returncode == 0, recorded.stderr
    requests_before = len(fake_upstream.requests)
    offline = {**env, "COLIBRI_KIMI_BASE_URL": "http://127.0.0.1:9/nothing-here"}
    replayed = cli(
        offline,
        "run",
        str(scenario_file(tmp_path)),
        "--format",
        "json",
        "--replay",
        str(recording),
        "--concurrency",
        "1",
    )
    assert replayed.returncode == 0, replayed.stderr
    assert len(fake_upstream.requests) == requests_before
    first, second = json.loads(recorded.stdout)[0], json.loads(replayed.stdout)[0]
    assert first["models"][0]["passed"] == second["models"][0]["passed"] == 2
    assert [r["trajectory"] for r in first["models"][0]["results"]] == [
        r["trajectory"] for r in second["models"][0]["results"]
    ]


def test_run_exit_codes(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    env = host_env(fake_upstream)
    script_runs(fake_upstream, 2, final="Sorry, no idea.")
    failed = cli(env, "run", str(scenario_file(tmp_path)), "--concurrency", "1")
    assert failed.returncode == 1, failed.stderr
    assert "lookup" in failed.stdout  # the pretty table names the scenario
    invalid = cli(env, "run", str(scenario_file(tmp_path, max_steps=51)))
    assert invalid.returncode == 2
    assert "max_steps" in invalid.stderr
    errored = cli({**env, "COLIBRI_KIMI_API_KEY": ""}, "run", str(scenario_file(tmp_path)))
    assert errored.returncode == 3, errored.stderr
    schema = cli(env, "run", "--schema")
    assert schema.returncode == 0 and "colibri" in json.loads(schema.stdout)["properties"]


def test_junit_output_has_a_testcase_per_model(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    script_runs(fake_upstream, 2)
    junit = tmp_path / "junit.xml"
    done = cli(
        host_env(fake_upstream),
        "run",
        str(scenario_file(tmp_path)),
        "--format",
        "junit",
        "--out",
        str(junit),
        "--concurrency",
        "1",
    )
    assert done.returncode == 0, done.stderr
    [case] = ET.parse(junit).getroot().iter("testcase")
    assert case.get("name") == "kimi:kimi-k2-0905-preview"


def test_call_threads_usage_and_models(fake_upstream: FakeUpstream) -> None:
    env = host_env(fake_upstream)
    fake_upstream.kimi.enqueue(kimi_text("stored answer"))
    called = cli(env, "call", "--thread", "new", "remember this")
    assert called.returncode == 0, called.stderr
    thread_id = json.loads(called.stdout)["thread_id"]
    listed = cli(env, "threads")
    assert thread_id in listed.stdout and "remember this" in listed.stdout
    shown = json.loads(cli(env, "threads", "show", thread_id).stdout)
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]
    usage = json.loads(cli(env, "usage", "--since", "today", "--json").stdout)
    assert usage["total"]["calls"] == 1
    table = cli(env, "usage", "--by", "model")
    assert "kimi-k2" in table.stdout and "total" in table.stdout
    assert json.loads(cli(env, "threads", "delete", thread_id).stdout)["deleted"] is True
    models = json.loads(cli(env, "models", "--provider", "kimi").stdout)
    assert models["providers"][0]["configured"] is True
    missing = cli(env, "threads", "show", "th_unknown")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"]["code"] == "INVALID_REQUEST"


async def test_router_run_over_stdio_reports_progress_per_run_and_a_cancel_stops_everything(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    import anyio
    from harness import router_session

    script_runs(fake_upstream, 2)
    updates: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(f"{progress:g}/{total:g} {message}")

    scenario = {**SCENARIO, "repeat": 2}
    env = {**server_env, "COLIBRI_RUN_CONCURRENCY": "1"}
    async with router_session(env, server_log) as session:
        result = await session.call_tool("router_run", {"scenario": scenario}, progress_callback=on_progress)
        assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
        report = result.structured_content or {}
        assert report["models"][0]["passed"] == 2
        assert [u.split(" ")[0] for u in updates] == ["1/2", "2/2"]
        assert "repeat" in updates[0]
        fake_upstream.kimi.enqueue(kimi_text("never", delay_s=30))
        with anyio.move_on_after(1.0):
            await session.call_tool("router_run", {"scenario": {**SCENARIO, "repeat": 1}})
        disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)
        assert disconnect is not None  # the upstream request was closed


def test_call_and_ask_many_send_files_named_with_file(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    (tmp_path / "migrate.sql").write_text("ALTER TABLE users DROP COLUMN email;\n")
    env = {**host_env(fake_upstream), "COLIBRI_WORKSPACE": str(tmp_path)}
    fake_upstream.kimi.enqueue(kimi_text("unsafe"))

    called = cli(env, "call", "Is this migration safe?", "--file", "migrate.sql")

    assert called.returncode == 0, called.stdout + called.stderr
    assert json.loads(called.stdout)["files_read"][0]["path"] == "migrate.sql"
    (request,) = fake_upstream.kimi.requests
    assert "DROP COLUMN email" in json.dumps(request.body)

    fake_upstream.kimi.enqueue(kimi_text("unsafe"))
    fake_upstream.anthropic.enqueue(anthropic_text("unsafe too"))
    asked = cli(
        env, "ask-many", "Is this migration safe?", "--file", "migrate.sql", "--model", "kimi", "--model", "sonnet"
    )

    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert [f["path"] for f in json.loads(asked.stdout)["files_read"]] == ["migrate.sql"]
    assert all(
        "DROP COLUMN email" in json.dumps(r.body)
        for r in [fake_upstream.kimi.requests[-1], *fake_upstream.anthropic.requests]
    )


def test_ask_many_refuses_bad_arguments_as_the_tool_does(fake_upstream: FakeUpstream) -> None:
    done = cli(host_env(fake_upstream), "ask-many", "hi", "--model", "kimi", "--max-tokens", "0")

    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "INVALID_REQUEST"
    assert error["message"].startswith(("--model: ", "--max-tokens 0: "))  # the options as typed
    assert "pydantic" not in error["message"]
