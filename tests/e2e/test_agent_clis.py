"""Claude Code, Codex and Gemini CLI as providers, end to end: the real ``colibri-router`` process over
stdio with the official MCP client, running the REAL command-line agents (pinned in
``tests/agent-clis``), each pointed at a scripted loopback endpoint of its own API, in temporary homes.

The scripted model answers each agent's requests in order; what the agent sent back (tool results,
the conversation) is recorded, so the tests see what the agent did, not only what colibri said.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_clis import COMMANDS, agent_bin_dir, agent_env
from agent_upstream import AgentUpstream, ApiRoute, Turn, call, limit, say
from harness import router_session
from http_harness import http_server, http_session
from mcp import ClientSession

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PROVIDERS = list(COMMANDS)
SECRET = "the division on line 2 fails"
COLIBRI_OWN_KEY = "sk-colibri-own-provider-key-0123456789"


@pytest.fixture
def upstream() -> Iterator[AgentUpstream]:
    with AgentUpstream() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("total = 10\nprint(total / 0)\n")
    return root


def server_env(upstream: AgentUpstream, tmp_path: Path, workspace: Path, **options: Any) -> dict[str, str]:
    home = tmp_path / "home"
    env = {
        "PATH": f"{agent_bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLIBRI_WORKSPACE": str(workspace),
        "COLIBRI_STATE_DIR": os.environ["COLIBRI_STATE_DIR"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "COLIBRI_LOG_LEVEL": "info",
        # colibri-router's own providers' keys and URLs, as a user has them: never the agents'.
        "ANTHROPIC_API_KEY": COLIBRI_OWN_KEY,
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/not-for-agents",
        "GEMINI_API_KEY": COLIBRI_OWN_KEY,
        "OPENAI_API_KEY": COLIBRI_OWN_KEY,
        **agent_env(upstream, home, **options),
    }
    return env


def route_of(upstream: AgentUpstream, provider: str) -> ApiRoute:
    return {"claude-code": upstream.anthropic, "codex": upstream.responses, "gemini-cli": upstream.gemini}[provider]


def read_turn(provider: str, workspace: Path) -> Turn:
    path = str(workspace / "src" / "app.py")
    if provider == "claude-code":
        return call("Read", file_path=path)
    if provider == "codex":
        return call("exec_command", cmd="cat src/app.py")
    return call("read_file", absolute_path=path, file_path=path)


def write_and_shell_turns(provider: str, workspace: Path) -> list[Turn]:
    """The scripted model tries to write a file and to run a command that would leave a file."""
    evil, ran = workspace / "evil.txt", workspace / "ran.txt"
    if provider == "claude-code":
        return [call("Write", file_path=str(evil), content="x"), call("Bash", command=f"touch {ran}")]
    if provider == "codex":
        escalated = {"cmd": f"touch {ran}", "sandbox_permissions": "require_escalated", "justification": "needed"}
        return [call("exec_command", cmd=f"echo x > {evil}"), call("exec_command", **escalated)]
    return [call("write_file", file_path=str(evil), content="x"), call("run_shell_command", command=f"touch {ran}")]


async def ask(session: ClientSession, arguments: dict[str, Any], steps: list[str] | None = None) -> Any:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if steps is not None and message:
            steps.append(message)

    return await session.call_tool("router_call", arguments, progress_callback=on_progress)


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert result.structured_content == json.loads(result.content[0].text)
    return dict(result.structured_content)


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content[0].text
    return dict(result.structured_content["error"])


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_agent_reads_the_project_and_refuses_writes_and_commands(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    route = route_of(upstream, provider)
    route.enqueue(
        read_turn(provider, workspace),
        *write_and_shell_turns(provider, workspace),
        say(f"Bug: {SECRET}.", thinking="line 2 divides by zero"),
    )
    env = server_env(upstream, tmp_path, workspace)
    steps: list[str] = []
    async with router_session(env, tmp_path / "stderr.log") as session:
        result = structured(await ask(session, {"provider": provider, "prompt": "Review src/app.py for bugs"}, steps))

    assert result["content"] == f"Bug: {SECRET}."
    assert result["provider"] == provider
    assert result["price_source"] == "subscription"
    assert result["prompt_tokens"] > 0 and result["completion_tokens"] > 0
    if provider == "claude-code":
        assert result["cost_usd"] is not None and result["cost_usd"] > 0  # Claude Code's own figure
    else:
        assert result["cost_usd"] is None
    if provider != "gemini-cli":  # Gemini CLI's stream-json reports no thoughts
        assert result["thinking"] == "line 2 divides by zero"
    # The agent read the file itself, and its write and its command were refused: nothing exists.
    assert "print(total / 0)" in route.tool_results[0]
    assert sorted(p.name for p in workspace.iterdir()) == ["src"]
    assert len(route.tool_results) >= 3
    # Every request carried the agent's own key, none colibri-router's.
    assert route.refused == [] and COLIBRI_OWN_KEY not in json.dumps([r.headers for r in route.requests])
    # The prompt reached the model (through stdin), the workspace is where the agent ran.
    first = json.dumps(route.main_requests[0].body)
    assert "Review src/app.py for bugs" in first
    # Progress relayed the agent's steps.
    assert any(step.startswith(f"{provider}: ") and "app.py" in step for step in steps), steps


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_thread_resumes_the_agents_own_session(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    route = route_of(upstream, provider)
    route.enqueue(say("The first answer: 41."), say("The second answer: 42."))
    env = server_env(upstream, tmp_path, workspace)
    async with router_session(env, tmp_path / "stderr.log") as session:
        first = structured(await ask(session, {"provider": provider, "prompt": "Pick a number", "thread_id": "new"}))
        thread = first["thread_id"]
        second = structured(await ask(session, {"provider": provider, "prompt": "Add one", "thread_id": thread}))
        stored = await session.call_tool("router_threads", {"action": "get", "thread_id": thread})

    assert second["content"] == "The second answer: 42." and second["thread_id"] == thread
    last = json.dumps(route.main_requests[-1].body)
    # The CLI continued its own session: the model sees the earlier turns as the CLI stored them, and
    # colibri sent only the new turn (no replayed transcript).
    assert "Pick a number" in last and "The first answer: 41." in last and "Add one" in last
    assert "The conversation so far" not in last
    messages = stored.structured_content["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_agent_starts_no_mcp_server_and_carries_the_nesting_marker(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "mcp-server-started"
    route_of(upstream, provider).enqueue(say("done"))
    env = server_env(upstream, tmp_path, workspace, mcp_marker=marker)
    async with router_session(env, tmp_path / "stderr.log") as session:
        structured(await ask(session, {"provider": provider, "prompt": "hello"}))
    await anyio.sleep(0.5)
    assert not marker.exists(), f"{provider} started the MCP server of its configuration"


async def test_codex_runs_with_the_nesting_marker_in_its_environment(
    upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    upstream.responses.enqueue(call("exec_command", cmd="echo parent=$COLIBRI_AGENT_CLI_PARENT"), say("ok"))
    env = server_env(upstream, tmp_path, workspace)
    async with router_session(env, tmp_path / "stderr.log") as session:
        structured(await ask(session, {"provider": "codex", "prompt": "what runs you?"}))
    assert "parent=codex" in upstream.responses.tool_results[0]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_colibri_started_under_an_agent_refuses_to_start_one(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    env = {**server_env(upstream, tmp_path, workspace), "COLIBRI_AGENT_CLI_PARENT": "codex"}
    async with router_session(env, tmp_path / "stderr.log") as session:
        error = error_of(await ask(session, {"provider": provider, "prompt": "hello"}))
    assert error["code"] == "INVALID_REQUEST"
    assert "loop" in error["message"] and f"codex → colibri-router → {provider}" in error["message"]
    assert route_of(upstream, provider).requests == []


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cancelling_a_call_stops_the_agents_whole_process_group_within_a_second(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex
    route = route_of(upstream, provider)
    route.enqueue(say("too late", delay_s=30))
    env = {**server_env(upstream, tmp_path, workspace), "AGENT_TEST_TAG": tag}
    async with router_session(env, tmp_path / "stderr.log") as session:
        with anyio.move_on_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(ask, session, {"provider": provider, "prompt": "slow"})
                await until(lambda: bool(route.main_requests))  # the agent runs and waits for the model
                assert agent_processes(tag), "no agent process found while the call runs"
                group.cancel_scope.cancel()  # abandoning the call sends notifications/cancelled
        with anyio.move_on_after(1.0):
            await until(lambda: not agent_processes(tag))
        assert agent_processes(tag) == [], "the agent's processes outlived the cancellation by a second"
        # The server still serves.
        route.enqueue(say("still here"))
        assert structured(await ask(session, {"provider": provider, "prompt": "again"}))["content"] == "still here"


async def until(condition: Callable[[], bool]) -> None:
    """Poll ``condition`` (a file system or another process's state: nothing to wait on)."""
    while not condition():  # noqa: ASYNC110
        await anyio.sleep(0.02)


def agent_processes(tag: str) -> list[int]:
    """Processes started for an agent in this test: its environment has the test's tag and the
    nesting marker (which only colibri-router's children carry)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        ours = f"AGENT_TEST_TAG={tag}".encode() in environ and state != "Z"
        if ours and any(item.startswith(b"COLIBRI_AGENT_CLI_PARENT=") for item in environ):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_missing_command_is_a_config_error_saying_how_to_install_it(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    variable = {
        "claude-code": "COLIBRI_CLAUDE_CODE_BIN",
        "codex": "COLIBRI_CODEX_BIN",
        "gemini-cli": "COLIBRI_GEMINI_CLI_BIN",
    }
    env = {**server_env(upstream, tmp_path, workspace), variable[provider]: str(tmp_path / "missing" / "cli")}
    async with router_session(env, tmp_path / "stderr.log") as session:
        error = error_of(await ask(session, {"provider": provider, "prompt": "hello"}))
        models = await session.call_tool("router_models", {"provider": provider})
    prefix = provider.upper().replace("-", "_")
    assert error["code"] == f"{prefix}_CONFIG_ERROR" and error["kind"] == "CONFIG_ERROR"
    assert "npm install -g" in error["message"] and variable[provider] in error["message"]
    assert models.structured_content["providers"][0]["configured"] is False


async def test_router_models_shows_the_installed_agents_configured(
    upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    env = server_env(upstream, tmp_path, workspace)
    async with router_session(env, tmp_path / "stderr.log") as session:
        listed = (await session.call_tool("router_models", {})).structured_content["providers"]
    by_name = {entry["name"]: entry for entry in listed}
    for provider in PROVIDERS:
        assert by_name[provider]["configured"] is True and by_name[provider]["wire"] == "agent-cli"
        assert by_name[provider]["default_model"] == "default"
    assert "gpt-5-codex" in by_name["codex"]["models"]
    assert by_name["host"]["configured"] is False  # this client declared no sampling


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_usage_limit_is_quota_exceeded_and_the_fallback_moves_on(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    route_of(upstream, provider).enqueue(limit("You've hit your usage limit. Try again at 3:04 PM.", 3600))
    other = "gemini-cli" if provider != "gemini-cli" else "codex"
    route_of(upstream, other).enqueue(say("answered by the fallback"))
    env = server_env(upstream, tmp_path, workspace)
    async with router_session(env, tmp_path / "stderr.log") as session:
        alone = error_of(await ask(session, {"provider": provider, "prompt": "hello"}))
        route_of(upstream, provider).enqueue(limit("You've hit your usage limit. Try again at 3:04 PM.", 3600))
        chained = structured(
            await ask(session, {"provider": provider, "prompt": "hello", "fallback": [f"{other}:default"]})
        )
    assert alone["kind"] == "QUOTA_EXCEEDED" and alone["code"].endswith("_API_ERROR")
    assert "usage limit" in alone["message"]
    assert chained["provider"] == other and chained["content"] == "answered by the fallback"
    assert [a["outcome"] for a in chained["attempts"]] == [alone["code"], "ok"]


@pytest.mark.parametrize("provider", ["claude-code", "gemini-cli"])
async def test_an_agent_without_a_login_is_auth_failed_naming_the_login_command(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    env = server_env(upstream, tmp_path, workspace, logged_in=False)
    async with router_session(env, tmp_path / "stderr.log") as session:
        error = error_of(await ask(session, {"provider": provider, "prompt": "hello"}))
    assert error["kind"] == "AUTH_FAILED"
    assert {"claude-code": "claude /login", "gemini-cli": "gemini"}[provider] in error["message"]


async def test_codex_refused_by_its_api_is_auth_failed(
    upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    env = {**server_env(upstream, tmp_path, workspace), "SCRIPTED_OPENAI_KEY": "sk-wrong"}
    async with router_session(env, tmp_path / "stderr.log") as session:
        error = error_of(await ask(session, {"provider": "codex", "prompt": "hello"}))
    assert error["kind"] == "AUTH_FAILED" and "codex login" in error["message"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_system_prompt_reasoning_and_a_replayed_conversation_reach_the_model(
    provider: str, upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    route = route_of(upstream, provider)
    route.enqueue(say("Arr, 42."))
    messages = [
        {"role": "user", "content": "Pick a number"},
        {"role": "assistant", "content": "41 (from another model)"},
        {"role": "user", "content": "Add one"},
    ]
    arguments = {
        "provider": provider,
        "messages": messages,
        "system_prompt": "Answer like a pirate.",
        "reasoning": "high",
    }
    env = server_env(upstream, tmp_path, workspace)
    async with router_session(env, tmp_path / "stderr.log") as session:
        result = structured(await ask(session, arguments))

    assert result["content"] == "Arr, 42."
    body = route.main_requests[0].body
    sent = json.dumps(body)
    # No session of this agent in the history: the conversation is replayed as a transcript.
    assert "The conversation so far" in sent and "41 (from another model)" in sent and "Add one" in sent
    assert "Answer like a pirate." in sent
    if provider == "claude-code":  # the flag: the system prompt, not the user's turn
        assert "Answer like a pirate." in json.dumps(body["system"])
        assert body["output_config"] == {"effort": "high"}
    elif provider == "codex":
        assert body["reasoning"]["effort"] == "high"
    else:
        assert any("reasoning 'high' ignored" in warning for warning in result["warnings"])


async def test_over_http_an_agent_is_refused_unless_the_server_allows_it(
    upstream: AgentUpstream, workspace: Path, tmp_path: Path
) -> None:
    upstream.responses.enqueue(say("answered over HTTP"))
    env = server_env(upstream, tmp_path, workspace)
    arguments = {"provider": "codex", "prompt": "hello"}
    with http_server(env, tmp_path / "refusing.log") as url:
        async with http_session(url, None) as session:
            refused = error_of(await session.call_tool("router_call", arguments))
    assert refused["code"] == "INVALID_REQUEST" and "COLIBRI_HTTP_AGENT_CLI=1" in refused["message"]
    assert upstream.responses.requests == []
    with http_server({**env, "COLIBRI_HTTP_AGENT_CLI": "1"}, tmp_path / "allowing.log") as url:
        async with http_session(url, None) as session:
            allowed = structured(await session.call_tool("router_call", arguments))
    assert allowed["content"] == "answered over HTTP"
