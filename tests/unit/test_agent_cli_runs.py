"""The agent-cli wire through the router with a stand-in agent (a script speaking Codex's events): the
process it runs, deadlines and cancellation of its whole process group, logging, refusals. The real
CLIs run in tests/e2e/test_agent_clis.py."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from colibri_router.catalog.schema import RouterModelsInput
from colibri_router.catalog.service import list_models
from colibri_router.conversation import CompletionRequest
from colibri_router.errors import ColibriError
from colibri_router.progress import Notify
from colibri_router.router import route
from colibri_router.router.call import call_of
from colibri_router.schema import RouterCallInput, RouterCallResult
from colibri_router.session import McpSession, Sampled, in_session
from colibri_router.settings import load_settings

pytestmark = pytest.mark.anyio


async def routed(args: RouterCallInput, notify: Notify | None = None) -> RouterCallResult:
    """``args`` through the router, converted where a call enters (its files read)."""
    return (await route(await call_of(args, load_settings()), notify=notify)).result


AGENT = """\
import json, os, subprocess, sys, time
if sys.argv[1:] == ["--version"]:
    print("codex-cli 0.0-test"); sys.exit(0)
state = os.environ["FAKE_AGENT_DIR"]
open(os.path.join(state, "argv.json"), "w").write(json.dumps(sys.argv))
open(os.path.join(state, "cwd"), "w").write(os.getcwd())
prompt = sys.stdin.read()
sys.stderr.write("agent noise SECRET-STDERR-LINE\\n"); sys.stderr.flush()
print(json.dumps({"type": "thread.started", "thread_id": "t-1"}), flush=True)
if os.environ.get("FAKE_AGENT_MODE") == "hang":
    child = subprocess.Popen(["sleep", "60"])
    open(os.path.join(state, "pids"), "w").write(f"{os.getpid()} {child.pid}")
    signal_ignored = __import__("signal").signal(15, lambda *a: None)  # only SIGKILL stops it
    time.sleep(60)
print(json.dumps({"type": "item.started", "item": {"type": "command_execution", "command": "cat a.py"}}), flush=True)
print(json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": "echo: " + prompt}}), flush=True)
print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 3, "output_tokens": 4}}), flush=True)
"""


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "codex"
    script.write_text(f"#!{sys.executable}\n{AGENT}")
    script.chmod(0o755)
    state = tmp_path / "state"
    state.mkdir()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    monkeypatch.setenv("COLIBRI_CODEX_BIN", str(script))
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(workspace))
    monkeypatch.setenv("FAKE_AGENT_DIR", str(state))
    return state


async def test_a_call_runs_the_agent_in_the_workspace_with_the_prompt_on_stdin(
    agent: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    steps: list[str] = []

    async def notify(progress: float, message: str) -> None:
        steps.append(message)

    result = await routed(RouterCallInput(provider="codex", prompt="PROMPT-TEXT"), notify=notify)
    assert result.content == "echo: PROMPT-TEXT"
    assert (result.provider, result.model, result.price_source, result.cost_usd) == (
        "codex",
        "default",
        "subscription",
        None,
    )
    assert (result.prompt_tokens, result.completion_tokens) == (3, 4)
    assert "running cat a.py" in [step.removeprefix("codex: ") for step in steps]
    line = json.loads((agent / "argv.json").read_text())
    assert "PROMPT-TEXT" not in " ".join(line) and line[-1] == "-"
    assert (agent / "cwd").read_text() == os.environ["COLIBRI_WORKSPACE"]
    # The agent's stderr went to the log, never into the result.
    assert "SECRET-STDERR-LINE" in capfd.readouterr().err
    assert "SECRET-STDERR-LINE" not in result.model_dump_json()


async def test_no_token_counts_are_zero_with_a_warning(
    agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "quiet"
    script.write_text(
        f"#!{sys.executable}\nimport json,sys\nsys.stdin.read()\n"
        'print(json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": "hi"}}))\n'
        'print(json.dumps({"type": "turn.completed"}))\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("COLIBRI_CODEX_BIN", str(script))
    result = await routed(RouterCallInput(provider="codex", prompt="x", reasoning="high"))
    assert (result.prompt_tokens, result.completion_tokens) == (0, 0)
    assert any("no token counts" in warning for warning in result.warnings)


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.append(pid)
    return living


async def wait_for(path: Path) -> None:
    with anyio.fail_after(20):
        while not path.exists() or not path.read_text():  # noqa: ASYNC110 - another process writes it
            await anyio.sleep(0.02)


async def test_the_deadline_stops_the_whole_process_group_and_is_a_timeout(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_MODE", "hang")
    with pytest.raises(ColibriError) as caught:
        await routed(RouterCallInput(provider="codex", prompt="x", timeout_s=2))
    assert (caught.value.code, caught.value.kind) == ("CODEX_TIMEOUT", "TIMEOUT")
    pids = [int(pid) for pid in (agent / "pids").read_text().split()]
    assert alive(pids) == []


async def test_cancelling_stops_the_agent_and_its_children_within_a_second(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_MODE", "hang")
    async with anyio.create_task_group() as group:
        group.start_soon(routed, RouterCallInput(provider="codex", prompt="x"))
        await wait_for(agent / "pids")
        pids = [int(pid) for pid in (agent / "pids").read_text().split()]
        assert len(alive(pids)) == 2
        started = anyio.current_time()
        group.cancel_scope.cancel()
    assert anyio.current_time() - started < 1.0
    assert alive(pids) == []


async def test_tools_are_refused_for_an_agent(agent: Path) -> None:
    tool = {"name": "add", "input_schema": {"type": "object"}}
    with pytest.raises(ColibriError) as caught:
        await routed(RouterCallInput(provider="codex", prompt="x", tools=[tool]))
    assert caught.value.code == "INVALID_REQUEST" and "runs its own tools" in caught.value.message
    assert not (agent / "argv.json").exists()


async def test_a_nested_colibri_refuses_to_start_an_agent(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_AGENT_CLI_PARENT", "claude-code")
    with pytest.raises(ColibriError) as caught:
        await routed(RouterCallInput(provider="codex", prompt="x"))
    assert caught.value.code == "INVALID_REQUEST" and "loop" in caught.value.message
    assert not (agent / "argv.json").exists()


async def test_over_http_agents_are_refused_unless_the_server_allows_them(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with in_session(McpSession(over_http=True)):
        with pytest.raises(ColibriError) as caught:
            await routed(RouterCallInput(provider="codex", prompt="x"))
        assert caught.value.code == "INVALID_REQUEST" and "COLIBRI_HTTP_AGENT_CLI=1" in caught.value.message
        monkeypatch.setenv("COLIBRI_HTTP_AGENT_CLI", "1")
        assert (await routed(RouterCallInput(provider="codex", prompt="x"))).content == "echo: x"


async def test_the_agent_gets_the_marker_and_none_of_colibris_settings(
    agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "env-agent"
    script.write_text(
        f"#!{sys.executable}\nimport json,os,sys\nsys.stdin.read()\n"
        "names = sorted(k for k in os.environ if k.startswith(('COLIBRI_', 'ANTHROPIC_', 'OPENAI_', 'AGENT_')))\n"
        'print(json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": json.dumps(names)}}))\n'
        'print(json.dumps({"type": "turn.completed"}))\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("COLIBRI_CODEX_BIN", str(script))
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-should-not-leak")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-for-the-claude-provider")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AGENT_OWN_SETTING", "kept")
    result = await routed(RouterCallInput(provider="codex", prompt="x"))
    assert json.loads(result.content) == ["AGENT_OWN_SETTING", "COLIBRI_AGENT_CLI_PARENT"]


async def test_router_models_asks_each_agent_once_and_host_follows_the_session(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = await list_models(RouterModelsInput())
    by_name = {entry.name: entry for entry in listed.providers}
    assert by_name["codex"].configured is True and by_name["codex"].wire == "agent-cli"
    assert "gpt-5-codex" in by_name["codex"].models
    assert by_name["host"].configured is False
    monkeypatch.setenv("COLIBRI_CODEX_BIN", "/nonexistent/codex")
    assert {e.name: e for e in (await list_models(RouterModelsInput(provider="codex"))).providers}[
        "codex"
    ].configured is False

    async def sampler(request: CompletionRequest, hint: str | None) -> Sampled:
        return Sampled(text="from the host", model=None, stop_reason="endTurn")

    with in_session(McpSession(sampler=sampler)):
        hosted = (await list_models(RouterModelsInput(provider="host"))).providers[0]
        answer = await routed(RouterCallInput(provider="host", prompt="hi"))
    assert hosted.configured is True
    assert (answer.content, answer.model, answer.price_source, answer.cost_usd) == (
        "from the host",
        "host",
        "host",
        None,
    )


async def test_an_agent_call_is_in_the_ledger_and_budgets_do_not_warn(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from colibri_router.call.service import serve
    from colibri_router.history.schema import RouterUsageInput
    from colibri_router.history.service import usage

    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", "5")
    result = await serve(RouterCallInput(provider="codex", prompt="x"))
    assert not any("price" in warning for warning in result.warnings)
    totals = (await usage(RouterUsageInput(since="today"))).total
    assert (totals.calls, totals.unpriced_calls, totals.input_tokens) == (1, 1, 3)


async def test_an_agent_judges_an_agent_testing_scenario_without_any_key(
    agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from colibri_router.testing import run_scenario

    script = tmp_path / "judging-agent"
    script.write_text(
        f"#!{sys.executable}\nimport json,sys\nprompt = sys.stdin.read()\n"
        'text = json.dumps({"score": 1, "reason": "greets"}) if "Rubric:" in prompt else "Hello there!"\n'
        'print(json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": text}}))\n'
        'print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}}))\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("COLIBRI_CODEX_BIN", str(script))
    scenario = {
        "colibri": 1,
        "name": "greeting",
        "models": ["codex:default"],
        "turns": [{"user": "Say hello"}],
        "expect": [
            {"type": "final_text", "contains": ["Hello"]},
            {"type": "judge", "rubric": "The assistant greets the user.", "model": "codex:default"},
        ],
    }
    report = await run_scenario(scenario)
    (model,) = report.models
    assert (model.runs, model.passed) == (1, 1), report


async def test_files_are_handed_to_the_agent_as_paths_not_inlined(agent: Path) -> None:
    workspace = Path(os.environ["COLIBRI_WORKSPACE"])
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("SECRET_SAUCE = 42\n")
    result = await routed(RouterCallInput(provider="codex", prompt="Review it", files=["src/app.py"]))
    assert result.content.startswith("echo: ")
    assert "Review it" in result.content
    assert "- src/app.py" in result.content  # told where to read
    assert "SECRET_SAUCE" not in result.content  # never inlined: the agent reads the file itself
    assert [(f.path, f.bytes) for f in result.files_read or []] == [("src/app.py", 18)]
