"""Command-line agents as data: how each CLI is started, read-only and without MCP servers.

An ``agent-cli`` provider's entry holds one :class:`AgentCli`: the command and the variable that
may point at it, the argv pieces (templates: ``{model}``, ``{system}``, ``{effort}``, ``{session}``
are filled in per call), the dialect of its JSON event stream, and the text it prints when its
login is missing or its usage limit is reached. Flags and event formats were checked against the
versions the README names (``--help`` and real runs against a scripted endpoint).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeAlias

EventDialect: TypeAlias = Literal["claude", "codex", "gemini"]
# The model name that means "the CLI's own default": no model flag is passed.
CLI_DEFAULT_MODEL = "default"


@dataclass(frozen=True, slots=True)
class AgentCli:
    command: str  # looked up on PATH
    bin_env: str  # a variable that may name the executable instead
    package: str  # the npm package, for the install hint
    login: str  # what the user runs to log in
    events: EventDialect
    models: tuple[str, ...]  # the model names its docs list (any other name goes to the CLI as is)
    flags: tuple[str, ...]  # every call: non-interactive, JSON events, read-only, MCP off
    model: tuple[str, ...]
    resume: tuple[str, ...]  # continue the CLI's own session {session}
    system: tuple[str, ...] = ()  # empty: the system prompt goes at the head of the prompt
    effort: tuple[str, ...] = ()  # empty: `reasoning` is not adjustable (a warning says so)
    efforts: Mapping[str, str] = field(default_factory=dict)  # our reasoning level → the CLI's
    subcommand: tuple[str, ...] = ()  # before every flag (``exec``)
    tail: tuple[str, ...] = ()  # after everything (``-``: the prompt is on stdin)
    # A CLI with no flag for "no MCP servers": each server its config files name is switched off by
    # name ({server}); the files are TOML, ``${VAR:-default}`` and ``{workspace}`` are filled in.
    mcp_server_off: tuple[str, ...] = ()
    mcp_config_files: tuple[str, ...] = ()
    # Phrases (lower-case) in its error text: not logged in; a usage limit or quota reached.
    auth_phrases: tuple[str, ...] = ()
    limit_phrases: tuple[str, ...] = ()


_AUTH = ("not logged in", "please run /login", "invalid api key", "authentication", "unauthorized", "401")
_LIMITS = ("usage limit", "hit your limit", "limit reached", "exhausted your", "quota")

CLAUDE_CODE = AgentCli(
    command="claude",
    bin_env="COLIBRI_CLAUDE_CODE_BIN",
    package="@anthropic-ai/claude-code",
    login="claude /login",
    events="claude",
    models=("sonnet", "opus", "haiku", "fable"),
    # Plan mode reads and never edits; the tools that write, run commands or schedule work are not
    # even offered; anything that would ask for a permission is denied (nobody is there to answer);
    # only the MCP servers of --mcp-config (none) are started.
    flags=(
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "plan",
        "--permission-prompts",
        "none",
        "--disallowedTools",
        "Bash Edit Write MultiEdit NotebookEdit KillShell BashOutput EnterWorktree CronCreate ScheduleWakeup",
        "--strict-mcp-config",
    ),
    model=("--model", "{model}"),
    system=("--append-system-prompt", "{system}"),
    effort=("--effort", "{effort}"),
    efforts=MappingProxyType({"low": "low", "medium": "medium", "high": "high"}),
    resume=("--resume", "{session}"),
    auth_phrases=_AUTH,
    limit_phrases=_LIMITS,
)

CODEX = AgentCli(
    command="codex",
    bin_env="COLIBRI_CODEX_BIN",
    package="@openai/codex",
    login="codex login",
    events="codex",
    models=("gpt-5-codex", "gpt-5"),
    subcommand=("exec",),
    # The read-only sandbox with no approvals: commands may read, nothing can write, nothing asks.
    # `resume` takes no --sandbox flag, so both go as config overrides. Codex has no switch for "no
    # MCP servers" (`-c mcp_servers={}` merges, it does not replace): each configured one is disabled.
    flags=(
        "--json",
        "--skip-git-repo-check",
        "-c",
        'sandbox_mode="read-only"',
        "-c",
        'approval_policy="never"',
    ),
    mcp_server_off=("-c", "mcp_servers.{server}.enabled=false"),
    mcp_config_files=("${CODEX_HOME:-~/.codex}/config.toml", "{workspace}/.codex/config.toml"),
    model=("-m", "{model}"),
    effort=("-c", 'model_reasoning_effort="{effort}"'),
    efforts=MappingProxyType({"off": "minimal", "low": "low", "medium": "medium", "high": "high"}),
    resume=("resume", "{session}"),
    tail=("-",),
    auth_phrases=(*_AUTH, "codex login"),
    limit_phrases=_LIMITS,
)

GEMINI_CLI = AgentCli(
    command="gemini",
    bin_env="COLIBRI_GEMINI_CLI_BIN",
    package="@google/gemini-cli",
    login="gemini (then choose a login method)",
    events="gemini",
    models=("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro-preview"),
    # -p with a blank prompt: the prompt itself is read from stdin. The default approval mode,
    # headless, offers only the tools that need no approval (reading); no MCP server is allowed
    # (the name matches none); --skip-trust because the user chose COLIBRI_WORKSPACE.
    flags=(
        "-p",
        " ",
        "--output-format",
        "stream-json",
        "--approval-mode",
        "default",
        "--allowed-mcp-server-names",
        "colibri-router-none",
        "--skip-trust",
    ),
    model=("-m", "{model}"),
    resume=("--resume", "{session}"),
    auth_phrases=(*_AUTH, "invalid auth method", "login required"),
    limit_phrases=_LIMITS,
)
