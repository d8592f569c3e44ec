"""The agent-cli wire's pure rules: command lines, prompts and transcripts, event streams, failures."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.agents.command import argv, configured_mcp_servers, effort_for
from colibri_router.agents.events import AgentRun, read_line
from colibri_router.agents.failures import run_failure
from colibri_router.agents.transcript import build_prompt, message_texts, session_state
from colibri_router.conversation import Message, Text, Thinking, ToolCall, ToolResult, user_prompt
from colibri_router.providers import BUILTIN
from colibri_router.providers.registry import Registry
from colibri_router.settings import Settings

CLAUDE, CODEX, GEMINI = BUILTIN["claude-code"], BUILTIN["codex"], BUILTIN["gemini-cli"]
AGENTS = [CLAUDE, CODEX, GEMINI]


def command(spec: object, **kw: object) -> list[str]:
    options: dict[str, object] = {"model": "default", "system": None, "effort": None, "session": None, **kw}
    return argv(spec, "/bin/agent", **options)  # type: ignore[arg-type]


# -- command lines ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", AGENTS, ids=lambda s: s.name)
@given(text=st.text(min_size=1).map(lambda t: f"PROMPT-{t}"))
def test_the_prompt_never_reaches_the_command_line(spec: object, text: str) -> None:
    prompt = build_prompt(user_prompt(text), spec.name, None, True)  # type: ignore[attr-defined]
    assert prompt.text == text
    line = command(spec, model="gpt-5-codex", session="s-1")
    assert all(text not in token for token in line)


@pytest.mark.parametrize(
    ("spec", "read_only"),
    [
        (CLAUDE, ["--permission-mode", "plan", "--permission-prompts", "none", "--disallowedTools"]),
        (CODEX, ["-c", 'sandbox_mode="read-only"', "-c", 'approval_policy="never"']),
        (GEMINI, ["--approval-mode", "default", "--allowed-mcp-server-names"]),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_every_call_is_read_only_and_resuming_keeps_it_so(spec: object, read_only: list[str]) -> None:
    for line in (command(spec), command(spec, session="abc")):
        joined = " ".join(line)
        assert " ".join(read_only) in joined
        for flag in ("--yolo", "--dangerously", "bypassPermissions", "acceptEdits", "workspace-write", "auto_edit"):
            assert flag not in joined


def test_claude_codes_disallowed_tools_cover_writing_and_shells() -> None:
    line = command(CLAUDE)
    denied = line[line.index("--disallowedTools") + 1].split()
    assert {"Bash", "Edit", "Write", "NotebookEdit"} <= set(denied)
    assert "--strict-mcp-config" in line and "--mcp-config" not in line


def test_model_flag_only_for_a_named_model_and_codex_reads_stdin() -> None:
    assert "--model" not in command(CLAUDE)
    assert command(CLAUDE, model="opus")[-2:] == ["--model", "opus"]
    line = command(CODEX, model="gpt-5-codex")
    assert (
        line[1] == "exec" and line[-1] == "-" and line[line.index("-m") : line.index("-m") + 2] == ["-m", "gpt-5-codex"]
    )
    assert command(GEMINI, model="gemini-2.5-pro")[-2:] == ["-m", "gemini-2.5-pro"]


def test_resume_continues_each_clis_own_session() -> None:
    assert command(CLAUDE, session="s1")[-2:] == ["--resume", "s1"]
    assert command(CODEX, session="s1")[-3:] == ["resume", "s1", "-"]
    assert command(GEMINI, session="s1")[-2:] == ["--resume", "s1"]


def test_the_system_prompt_uses_the_flag_where_there_is_one_and_braces_survive() -> None:
    line = command(CLAUDE, system="Be {brief}.")
    assert line[line.index("--append-system-prompt") + 1] == "Be {brief}."
    assert "Be {brief}." not in command(CODEX, system="Be {brief}.")
    # Without a flag it heads a new session's prompt, not a resumed one's.
    messages = (
        *user_prompt("q1"),
        Message("assistant", (Text("a1", session_state("codex", "s9")),)),
        *user_prompt("q2"),
    )
    assert build_prompt(user_prompt("hi"), "codex", "Be brief.", False).text.startswith(
        "System instructions:\nBe brief."
    )
    assert "Be brief." not in build_prompt(messages, "codex", "Be brief.", False).text
    assert "Be brief." not in build_prompt(user_prompt("hi"), "claude-code", "Be brief.", True).text


def test_reasoning_maps_to_the_effort_setting_or_a_warning() -> None:
    assert effort_for(CLAUDE, "high") == ("high", None)
    assert effort_for(CODEX, "off") == ("minimal", None)
    assert command(CODEX, effort="low")[-3:-1] == ["-c", 'model_reasoning_effort="low"']
    value, warning = effort_for(GEMINI, "high")
    assert value is None and warning is not None and "gemini-cli" in warning
    assert effort_for(CLAUDE, "off")[1] is not None
    assert effort_for(CLAUDE, None) == (None, None)


def test_codex_switches_off_each_configured_mcp_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('[mcp_servers.colibri]\ncommand = "x"\n[mcp_servers."odd.name"]\ncommand = "y"\n')
    workspace = tmp_path / "ws"
    (workspace / ".codex").mkdir(parents=True)
    (workspace / ".codex" / "config.toml").write_text('[mcp_servers.docs]\ncommand = "z"\n')
    monkeypatch.setenv("CODEX_HOME", str(home))
    names = configured_mcp_servers(CODEX, str(workspace))
    assert names == ("colibri", "docs")
    line = command(CODEX, mcp_servers=names)
    assert "mcp_servers.colibri.enabled=false" in line and "mcp_servers.docs.enabled=false" in line
    (home / "config.toml").write_text("not toml [")
    assert configured_mcp_servers(CODEX, str(workspace)) == ("docs",)
    assert configured_mcp_servers(CLAUDE, str(workspace)) == ()


def test_an_alias_of_another_providers_model_is_the_plain_name_for_an_agent() -> None:
    registry = Registry(BUILTIN)
    assert registry.choose("claude-code", "sonnet", Settings()).model == "sonnet"
    assert registry.choose(None, "codex:gpt-5-codex", Settings()).provider.name == "codex"
    assert registry.choose("codex", None, Settings()).model == "default"
    assert registry.choose(None, "sonnet", Settings()).provider.name == "claude"


# -- transcripts -----------------------------------------------------------------------------------------


def test_a_conversation_is_a_plain_transcript_with_tool_turns_summarised() -> None:
    messages = (
        *user_prompt("Sum 2 and 3"),
        Message("assistant", (Thinking("hidden"), Text("Calling."), ToolCall("c1", "add", {"a": 2, "b": 3}))),
        Message("user", (ToolResult("c1", "5"),)),
        Message("assistant", (Text("It is 5."),)),
        *user_prompt("And doubled?"),
    )
    prompt = build_prompt(messages, "codex", None, False)
    assert prompt.session is None
    assert prompt.text == (
        "The conversation so far (answer the last user turn):\n\n"
        "User: Sum 2 and 3\n\n"
        'Assistant: Calling.\n[called tool add with {"a":2,"b":3}]\n\n'
        "User: [result of tool add: 5]\n\n"
        "Assistant: It is 5.\n\n"
        "User: And doubled?\n"
    )
    assert "hidden" not in prompt.text
    assert message_texts(messages)[1:3] == ['Calling.\n[called tool add with {"a":2,"b":3}]', "[result of tool add: 5]"]


def test_the_agents_own_session_is_resumed_with_only_the_new_turns() -> None:
    mine = Message("assistant", (Text("41", session_state("codex", "thread-9")),))
    messages = (*user_prompt("Pick"), mine, *user_prompt("Add one"))
    assert build_prompt(messages, "codex", None, False) == build_prompt(
        user_prompt("Add one"), "x", None, False
    ).__class__("Add one", "thread-9")
    # Another provider's session, or a later assistant turn without one: the whole transcript again.
    assert build_prompt(messages, "gemini-cli", None, False).session is None
    later = (*messages, Message("assistant", (Text("plain"),)), *user_prompt("more"))
    assert build_prompt(later, "codex", None, False).session is None


# -- event streams (lines as the tested versions print them) ---------------------------------------------


def fold(dialect: str, events: list[dict[str, object]]) -> tuple[AgentRun, list[str]]:
    run = AgentRun(root="/work/project")
    steps = [step for event in events if (step := read_line(dialect, json.dumps(event), run))]  # type: ignore[arg-type]
    return run, steps


def test_claude_stream_json() -> None:
    run, steps = fold(
        "claude",
        [
            {"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-sonnet-4-5"},
            {
                "type": "assistant",
                "message": {
                    "model": "claude-sonnet-4-5",
                    "content": [
                        {"type": "tool_use", "name": "Read", "input": {"file_path": "/work/project/src/app.py"}}
                    ],
                },
            },
            {"type": "assistant", "message": {"content": [{"type": "thinking", "thinking": "hmm"}]}},
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "draft"}]}},
            {
                "type": "assistant",
                "parent_tool_use_id": "t1",
                "message": {"content": [{"type": "text", "text": "sub"}]},
            },
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": "Final.",
                "session_id": "s-1",
                "total_cost_usd": 0.0123,
                "usage": {
                    "input_tokens": 10,
                    "cache_read_input_tokens": 5,
                    "cache_creation_input_tokens": 2,
                    "output_tokens": 7,
                },
            },
        ],
    )
    assert steps == ["started", "Read src/app.py", "thinking"]
    assert (run.session, run.model, run.text(), run.cost_usd, run.finished) == (
        "s-1",
        "claude-sonnet-4-5",
        "Final.",
        0.0123,
        True,
    )
    assert run.usage is not None and (run.usage.prompt_tokens, run.usage.cached_tokens) == (17, 5)
    assert "".join(run.thinking) == "hmm"


def test_claude_error_result() -> None:
    run, _ = fold(
        "claude",
        [
            {
                "type": "result",
                "subtype": "success",
                "is_error": True,
                "api_error_status": 429,
                "result": "API Error: Request rejected (429) · You've hit your usage limit.",
            }
        ],
    )
    assert run.error is not None and run.error_status == 429 and run.final is None


def test_codex_json_events() -> None:
    run, steps = fold(
        "codex",
        [
            {"type": "thread.started", "thread_id": "t-1"},
            {"type": "item.completed", "item": {"type": "error", "message": "metadata not found"}},
            {
                "type": "item.started",
                "item": {"type": "command_execution", "command": "/bin/bash -lc 'cat src/app.py'"},
            },
            {"type": "item.completed", "item": {"type": "reasoning", "text": "think"}},
            {"type": "item.completed", "item": {"type": "agent_message", "text": "Done."}},
            {
                "type": "turn.completed",
                "usage": {
                    "input_tokens": 690,
                    "cached_input_tokens": 90,
                    "output_tokens": 57,
                    "reasoning_output_tokens": 21,
                },
            },
        ],
    )
    assert steps == ["started", "running cat src/app.py", "thinking"]
    assert (run.session, run.text(), run.finished, run.error, run.cost_usd) == ("t-1", "Done.", True, None, None)
    assert run.usage is not None and (run.usage.prompt_tokens, run.usage.reasoning_tokens) == (690, 21)
    failed, _ = fold(
        "codex", [{"type": "error", "message": "x"}, {"type": "turn.failed", "error": {"message": "limit"}}]
    )
    assert failed.error == "limit" and failed.finished


def test_gemini_stream_json() -> None:
    run, steps = fold(
        "gemini",
        [
            {"type": "init", "session_id": "g-1", "model": "gemini-2.5-pro"},
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "content": "Let me look.", "delta": True},
            {"type": "tool_use", "tool_name": "read_file", "parameters": {"absolute_path": "/work/project/a.py"}},
            {"type": "tool_result", "status": "success", "output": ""},
            {"type": "message", "role": "assistant", "content": "It ", "delta": True},
            {"type": "message", "role": "assistant", "content": "works.", "delta": True},
            {"type": "result", "status": "success", "stats": {"input_tokens": 1240, "output_tokens": 92, "cached": 0}},
        ],
    )
    assert steps == ["started", "read_file a.py"]
    assert (run.session, run.model, run.text()) == ("g-1", "gemini-2.5-pro", "It works.")
    assert run.usage is not None and run.usage.completion_tokens == 92
    failed, _ = fold("gemini", [{"type": "result", "status": "error", "error": {"message": "quota"}}])
    assert failed.error == "quota"


@given(st.text())
def test_any_line_is_read_without_raising(line: str) -> None:
    for dialect in ("claude", "codex", "gemini"):
        read_line(dialect, line, AgentRun())  # type: ignore[arg-type]


# -- failures --------------------------------------------------------------------------------------------


def test_not_logged_in_is_auth_failed_naming_the_login_command() -> None:
    run = AgentRun(error="Not logged in · Please run /login")
    error = run_failure(CLAUDE, CLAUDE.agent, run, 1, "")  # type: ignore[arg-type]
    assert (error.kind, error.code) == ("AUTH_FAILED", "CLAUDE_CODE_API_ERROR")
    assert "claude /login" in error.message
    gemini = run_failure(GEMINI, GEMINI.agent, AgentRun(), 41, "Invalid auth method selected.")  # type: ignore[arg-type]
    assert gemini.kind == "AUTH_FAILED" and "gemini" in gemini.message


def test_a_usage_limit_is_quota_exceeded_with_the_reset_time() -> None:
    at = int(time.time()) + 3600
    error = run_failure(CLAUDE, CLAUDE.agent, AgentRun(error=f"Claude AI usage limit reached|{at}"), 1, "")  # type: ignore[arg-type]
    assert error.kind == "QUOTA_EXCEEDED" and "resets at" in error.message
    assert error.retry_after is not None and 3500 < error.retry_after <= 3600
    said = AgentRun(error="You've hit your usage limit. Try again at 3:04 PM.")
    codex = run_failure(CODEX, CODEX.agent, said, 1, "")  # type: ignore[arg-type]
    assert codex.kind == "QUOTA_EXCEEDED" and "try again at 3:04 PM" in codex.message
    later = run_failure(CODEX, CODEX.agent, AgentRun(error="You've hit your usage limit. Try again later."), 1, "")  # type: ignore[arg-type]
    assert later.message == "codex's subscription usage limit is reached"


def test_other_failures_quote_the_event_never_stderr() -> None:
    stderr = "Traceback: /home/me/.secret-path token=abc"
    error = run_failure(CODEX, CODEX.agent, AgentRun(error="model overloaded"), 2, stderr)  # type: ignore[arg-type]
    assert (
        error.kind == "PROVIDER_ERROR" and "model overloaded" in error.message and "exited with code 2" in error.message
    )
    assert ".secret-path" not in error.message
    silent = run_failure(CODEX, CODEX.agent, AgentRun(), 2, stderr)  # type: ignore[arg-type]
    assert ".secret-path" not in silent.message and "log" in silent.message


@pytest.mark.parametrize("name", ["claude", "openai", "gemini", "cohere", "ollama", "kimi"])
def test_an_agents_session_never_reaches_another_providers_request(name: str) -> None:
    from colibri_router.conversation import CompletionRequest
    from colibri_router.wires import codec_for

    spec = BUILTIN[name]
    mine = Message("assistant", (Text("41", session_state("codex", "SESSION-ID-123")),))
    request = CompletionRequest(
        model=spec.default_model or "llama3",
        messages=(*user_prompt("Pick"), mine, *user_prompt("Add one")),
        max_tokens=64,
    )
    body = json.dumps(codec_for(spec, request.model).encode(request).body)
    assert "41" in body and "SESSION-ID-123" not in body and "agent-cli" not in body
