"""The JSON event streams of the command-line agents, read into one :class:`AgentRun`. Pure.

One line of stdout is one JSON event. Each dialect reads its CLI's events (formats as the tested
versions print them, README "Subscriptions"):

- ``claude`` (``claude -p --output-format stream-json --verbose``): ``system/init`` (session id,
  model), ``assistant`` (content blocks: thinking, text, tool_use), ``user`` (tool results), and a
  final ``result`` (answer, ``is_error``, ``total_cost_usd``, ``usage``, ``api_error_status``).
- ``codex`` (``codex exec --json``): ``thread.started`` (thread id), ``item.started`` /
  ``item.completed`` (agent_message, reasoning, command_execution, file_change, mcp_tool_call,
  web_search, error), ``turn.completed`` (usage), ``turn.failed`` and ``error``.
- ``gemini`` (``gemini -p --output-format stream-json``): ``init`` (session id, model), ``message``
  (assistant text in deltas), ``tool_use``, ``tool_result``, ``error``, and ``result`` (status,
  stats with token counts, error).

Each event may yield a step for the progress notification (``codex: reading src/app.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from colibri_router.conversation import Usage
from colibri_router.providers.agent_cli import EventDialect

STEP_CHARS = 80  # a progress step is a glance, not the command's whole text


@dataclass
class AgentRun:
    """What a run said about itself, as the events came."""

    session: str | None = None
    model: str | None = None
    answer: list[str] = field(default_factory=list)  # the final answer's text, in pieces
    final: str | None = None  # the answer as the run's last event states it (wins when given)
    thinking: list[str] = field(default_factory=list)
    usage: Usage | None = None
    cost_usd: float | None = None
    error: str | None = None  # the CLI's own error text (read for its kind, never shown verbatim)
    error_status: int | None = None
    finished: bool = False
    root: str = ""  # the workspace: paths in steps are shown relative to it

    def step_for(self, tool: str, arguments: dict[str, Any]) -> str:
        """``Read src/app.py``: the tool and the one argument that says most about it."""
        for key in ("file_path", "absolute_path", "path", "pattern", "command", "cmd", "query", "url", "dir_path"):
            value = arguments.get(key)
            if isinstance(value, str) and value:
                if self.root and value.startswith(self.root.rstrip("/") + "/"):
                    value = value[len(self.root.rstrip("/")) + 1 :]
                return f"{tool} {_short(value)}"
        return tool

    def text(self) -> str:
        return self.final if self.final is not None else "".join(self.answer)


def read_line(dialect: EventDialect, line: str, run: AgentRun) -> str | None:
    """Fold one stdout line into ``run``; the progress step it stands for, if any. A line that is
    not a JSON object (a CLI's stray banner) is ignored."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    return _READERS[dialect](event, run)


def _claude(event: dict[str, Any], run: AgentRun) -> str | None:
    kind = event.get("type")
    if kind == "system" and event.get("subtype") == "init":
        run.session = _str(event.get("session_id")) or run.session
        run.model = _str(event.get("model")) or run.model
        return "started"
    if kind == "assistant":
        message = _dict(event.get("message"))
        if event.get("parent_tool_use_id"):
            return None  # a subagent's turn: not the answer
        step = None
        texts = []
        for item in _list(message.get("content")):
            block = _dict(item)
            if block.get("type") == "thinking":
                run.thinking.append(_str(block.get("thinking")) or "")
                step = "thinking"
            elif block.get("type") == "text":
                texts.append(_str(block.get("text")) or "")
            elif block.get("type") == "tool_use":
                step = run.step_for(_str(block.get("name")) or "a tool", _dict(block.get("input")))
        if texts:
            run.answer = texts  # the answer is the last assistant text
        model = _str(message.get("model"))
        if model and not model.startswith("<"):
            run.model = model
        return step
    if kind == "result":
        run.finished = True
        run.session = _str(event.get("session_id")) or run.session
        result = _str(event.get("result"))
        if event.get("is_error") or str(event.get("subtype", "success")) != "success":
            run.error = result or str(event.get("subtype") or "the agent failed")
            run.error_status = _int(event.get("api_error_status"))
        else:
            run.final = result
        usage = _dict(event.get("usage"))
        cached = _int(usage.get("cache_read_input_tokens")) or 0
        written = _int(usage.get("cache_creation_input_tokens")) or 0
        base = _int(usage.get("input_tokens"))
        if base is not None:
            thinking = _int(_dict(usage.get("output_tokens_details")).get("thinking_tokens")) or 0
            run.usage = Usage.of(
                base + cached + written,
                usage.get("output_tokens"),
                cached=cached,
                cache_write=written,
                reasoning=thinking,
            )
        cost = event.get("total_cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            run.cost_usd = float(cost)
        return None
    return None


def _codex(event: dict[str, Any], run: AgentRun) -> str | None:
    kind = event.get("type")
    if kind == "thread.started":
        run.session = _str(event.get("thread_id")) or run.session
        return "started"
    if kind in ("item.started", "item.completed"):
        item = _dict(event.get("item"))
        item_type = item.get("type")
        done = kind == "item.completed"
        if item_type == "agent_message" and done:
            run.answer = [_str(item.get("text")) or ""]
        elif item_type == "reasoning" and done:
            run.thinking.append(_str(item.get("text")) or "")
            return "thinking"
        elif item_type == "command_execution" and not done:
            return f"running {_short(_unwrapped(_str(item.get('command')) or ''))}"
        elif item_type == "file_change" and not done:
            return "changing files (refused: read-only)"
        elif item_type == "mcp_tool_call" and not done:
            return f"calling {item.get('server')}/{item.get('tool')}"
        elif item_type == "web_search" and not done:
            return f"searching {_short(_str(item.get('query')) or '')}"
        return None
    if kind == "turn.completed":
        run.finished = True
        usage = _dict(event.get("usage"))
        if _int(usage.get("input_tokens")) is None and _int(usage.get("output_tokens")) is None:
            return None  # no counts: the result says so rather than claiming zero
        run.usage = Usage.of(
            usage.get("input_tokens"),
            usage.get("output_tokens"),
            cached=usage.get("cached_input_tokens", 0),
            reasoning=usage.get("reasoning_output_tokens", 0),
        )
        return None
    if kind == "turn.failed":
        run.finished = True
        run.error = _str(_dict(event.get("error")).get("message")) or run.error or "the turn failed"
        return None
    if kind == "error":
        run.error = _str(event.get("message")) or run.error
        return None
    return None


def _gemini(event: dict[str, Any], run: AgentRun) -> str | None:
    kind = event.get("type")
    if kind == "init":
        run.session = _str(event.get("session_id")) or run.session
        run.model = _str(event.get("model")) or run.model
        return "started"
    if kind == "message" and event.get("role") == "assistant":
        content = _str(event.get("content")) or ""
        if event.get("delta"):
            run.answer.append(content)
        else:
            run.answer = [content]
        return None
    if kind == "tool_use":
        return run.step_for(_str(event.get("tool_name")) or "a tool", _dict(event.get("parameters")))
    if kind == "tool_result":
        # The answer is what follows the last tool: text before it was a preamble.
        run.answer = []
        return None
    if kind == "error":
        run.error = _str(event.get("message")) or run.error
        return None
    if kind == "result":
        run.finished = True
        if event.get("status") != "success":
            error = _dict(event.get("error"))
            run.error = _str(error.get("message")) or run.error or "the agent failed"
        stats = _dict(event.get("stats"))
        if _int(stats.get("input_tokens")) is not None:
            run.usage = Usage.of(stats.get("input_tokens"), stats.get("output_tokens"), cached=stats.get("cached", 0))
        return None
    return None


_READERS = {"claude": _claude, "codex": _codex, "gemini": _gemini}


def _short(text: str) -> str:
    """At most :data:`STEP_CHARS`, keeping the end (a path's file name, a command's last word)."""
    text = " ".join(text.split())
    return text if len(text) <= STEP_CHARS else "…" + text[-(STEP_CHARS - 1) :]


def _unwrapped(command: str) -> str:
    """``/bin/bash -lc 'cat src/app.py'`` → ``cat src/app.py``: Codex reports commands in their shell."""
    for shell in ("/bin/bash -lc ", "bash -lc ", "/bin/zsh -lc ", "/bin/sh -c "):
        if command.startswith(shell):
            return command[len(shell) :].strip("'\"")
    return command


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if type(value) is int else None
