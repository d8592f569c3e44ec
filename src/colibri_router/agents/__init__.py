"""The ``agent-cli`` wire: a command-line agent (Claude Code, Codex, Gemini CLI) run once per call.

Its transport is a subprocess, not HTTP: the prompt goes on stdin, JSON events come back on stdout
(:mod:`.events`), the agent runs read-only in ``COLIBRI_WORKSPACE`` with its MCP servers off, and its
process group is stopped on cancellation or at the deadline (:mod:`.process`). The answer is an
:class:`AssistantTurn` like any codec's, so fallbacks, budgets, threads and the ledger treat it as
any provider's; the CLI's session id rides on the answer's text part so that a thread resumes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import anyio

from colibri_router.agents.command import (
    argv,
    child_environment,
    configured_mcp_servers,
    effort_for,
    nested_in,
    require_executable,
)
from colibri_router.agents.events import AgentRun, read_line
from colibri_router.agents.failures import run_failure
from colibri_router.agents.process import run_process
from colibri_router.agents.transcript import build_prompt, session_state
from colibri_router.conversation import AssistantTurn, CompletionRequest, Part, Text, Thinking, Usage
from colibri_router.deadlines import within
from colibri_router.errors import ConfigError, InvalidRequestError, error_family
from colibri_router.logs import get_logger
from colibri_router.progress import CallProgress
from colibri_router.providers.spec import ProviderSpec
from colibri_router.retry import Deadline
from colibri_router.settings import Settings

__all__ = ["AgentAnswer", "refuse_nesting", "run_agent"]


@dataclass(frozen=True, slots=True)
class AgentAnswer:
    turn: AssistantTurn
    cost_usd: float | None  # the CLI's own figure, when it reports one


def refuse_nesting(spec: ProviderSpec) -> None:
    """INVALID_REQUEST when this process was started (through an agent's MCP configuration) by an
    agent that colibri-router started: running one more would loop."""
    parent = nested_in()
    if parent is not None:
        raise InvalidRequestError(
            f"refused: this colibri-router runs inside {parent}, which colibri-router started; calling "
            f"{spec.name} from here would loop (colibri-router → {parent} → colibri-router → {spec.name} → ...)"
        )


async def run_agent(
    spec: ProviderSpec,
    request: CompletionRequest,
    *,
    settings: Settings,
    deadline: Deadline,
    progress: CallProgress,
) -> AgentAnswer:
    refuse_nesting(spec)
    agent = spec.agent
    assert agent is not None, "an agent-cli entry names its command"
    path = require_executable(spec)
    workspace = settings.workspace or os.getcwd()
    if not await anyio.Path(workspace).is_dir():
        raise ConfigError(f"COLIBRI_WORKSPACE is {workspace!r}, which is no directory")
    prompt = build_prompt(request.messages, spec.name, request.system, bool(agent.system))
    effort, effort_warning = effort_for(spec, request.reasoning)
    mcp_servers = await anyio.to_thread.run_sync(configured_mcp_servers, spec, workspace)
    command = argv(
        spec,
        path,
        model=request.model,
        system=request.system,
        effort=effort,
        session=prompt.session,
        mcp_servers=mcp_servers,
    )
    run = AgentRun(root=workspace)

    async def on_line(line: str) -> None:
        step = read_line(agent.events, line, run)
        if step is not None:
            progress.mark_first_token()
            await progress.step(step)

    with within(deadline.remaining()) as scope:
        exit = await run_process(
            command, stdin=prompt.text, cwd=workspace, env=child_environment(spec), on_line=on_line, label=spec.name
        )
    if scope.cancelled_caught:
        seconds = round(deadline.at - progress.started_at, 1)
        raise error_family(spec.error_prefix).timeout(
            f"{spec.name} gave no answer within the call's deadline of {seconds} s (COLIBRI_TIMEOUT_S, or "
            "timeout_s in the call); the agent was stopped"
        )
    if exit.returncode != 0 or not run.finished:
        raise run_failure(spec, agent, run, exit.returncode, exit.stderr_tail)
    warnings = [effort_warning] if effort_warning else []
    if run.usage is None:
        warnings.append(f"{spec.name} reported no token counts: they are 0")
    parts: list[Part] = [Thinking("".join(run.thinking))] if any(run.thinking) else []
    state = session_state(spec.name, run.session) if run.session else None
    parts.append(Text(run.text(), state))
    model = run.model or request.model
    get_logger(__name__).info(f"[{spec.name}] answered", model=model, resumed=prompt.session is not None)
    turn = AssistantTurn(
        parts=tuple(parts),
        stop_reason="end_turn",
        model=model,
        usage=run.usage or Usage(),
        warnings=tuple(warnings),
    )
    return AgentAnswer(turn=turn, cost_usd=run.cost_usd)
