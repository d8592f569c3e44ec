"""Finding a command-line agent, knowing whether it runs, and the argv and environment of one call.

The executable is the entry's variable (``COLIBRI_CODEX_BIN``...) when set, else the command on
``PATH``. Whether it runs is asked once per process and executable (``--version``): listing models
must not start three Node programs every time. The prompt never goes on the command line (other
users can read argv, and it has a length limit): it goes on stdin.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tomllib

from colibri_router.conversation import Reasoning
from colibri_router.errors import error_family
from colibri_router.providers.agent_cli import CLI_DEFAULT_MODEL, AgentCli
from colibri_router.providers.registry import usable_providers
from colibri_router.providers.spec import ProviderSpec
from colibri_router.settings import variable

# Set in every agent's environment; an MCP server it starts inherits it, and colibri-router
# refuses to start an agent again from there (colibri → codex → colibri → codex ...).
NESTING_MARKER = "COLIBRI_AGENT_CLI_PARENT"
VERSION_TIMEOUT_S = 20.0


def executable(spec: ProviderSpec) -> str | None:
    """The path of the agent's executable as the environment says now, or None when there is none."""
    agent = _agent(spec)
    configured = variable(agent.bin_env)
    if configured:
        return configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None
    return shutil.which(agent.command)


def require_executable(spec: ProviderSpec) -> str:
    path = executable(spec)
    if path is None:
        agent = _agent(spec)
        where = variable(agent.bin_env)
        found = f"{agent.bin_env} points at {where!r}, no executable" if where else f"no `{agent.command}` on PATH"
        raise error_family(spec.error_prefix).config(
            f"{spec.name} needs its command-line agent: {found}. Install it with `npm install -g {agent.package}` "
            f"(then log in: `{agent.login}`), or set {agent.bin_env} to its path"
        )
    return path


def runs(spec: ProviderSpec) -> bool:
    """Whether the agent's command answers ``--version`` (asked once per process and path)."""
    path = executable(spec)
    return path is not None and _answers_version(path)


@functools.cache
def _answers_version(path: str) -> bool:
    try:
        done = subprocess.run(
            [path, "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def argv(
    spec: ProviderSpec,
    path: str,
    *,
    model: str,
    system: str | None,
    effort: str | None,
    session: str | None,
    mcp_servers: tuple[str, ...] = (),
) -> list[str]:
    """The command line of one call; ``system`` only when the CLI has a flag for it; ``mcp_servers``:
    the configured servers to switch off by name (see :func:`configured_mcp_servers`)."""
    agent = _agent(spec)
    values = {"model": model, "system": system or "", "effort": effort or "", "session": session or ""}
    pieces: list[tuple[str, ...]] = [agent.subcommand, agent.flags]
    if agent.mcp_server_off:
        pieces.extend(tuple(token.replace("{server}", name) for token in agent.mcp_server_off) for name in mcp_servers)
    if model != CLI_DEFAULT_MODEL:
        pieces.append(agent.model)
    if system and agent.system:
        pieces.append(agent.system)
    if effort and agent.effort:
        pieces.append(agent.effort)
    if session:
        pieces.append(agent.resume)
    pieces.append(agent.tail)
    # Filled by replacement, not str.format: a system prompt may hold braces of its own.
    return [path, *(_fill(token, values) for piece in pieces for token in piece)]


_VARIABLE = re.compile(r"\$\{([A-Z_]+):-([^}]*)\}")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def configured_mcp_servers(spec: ProviderSpec, workspace: str) -> tuple[str, ...]:
    """The MCP servers the agent's config files name, for a CLI that can only switch them off one
    by one. A file that is missing or does not parse names none (the CLI reports its own errors)."""
    names: dict[str, None] = {}
    for template in _agent(spec).mcp_config_files:
        path = _VARIABLE.sub(lambda m: os.environ.get(m.group(1)) or m.group(2), template)
        path = os.path.expanduser(path.replace("{workspace}", workspace))
        try:
            with open(path, "rb") as file:
                servers = tomllib.load(file).get("mcp_servers")
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(servers, dict):
            # A name a dotted -c path cannot spell is left to the nesting marker.
            names.update(dict.fromkeys(name for name in servers if _BARE_KEY.fullmatch(name)))
    return tuple(names)


def _fill(token: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        token = token.replace("{" + name + "}", value)
    return token


def effort_for(spec: ProviderSpec, reasoning: Reasoning | None) -> tuple[str | None, str | None]:
    """The CLI's effort value for ``reasoning``, or a warning when it has none for it."""
    if reasoning is None:
        return None, None
    agent = _agent(spec)
    value = agent.efforts.get(reasoning) if agent.effort else None
    if value is None:
        return None, f"reasoning {reasoning!r} ignored: {spec.name} has no effort setting for it"
    return value, None


def child_environment(spec: ProviderSpec) -> dict[str, str]:
    """The agent's environment: ours without colibri-router's own settings and without the keys and
    base URLs of its providers (``ANTHROPIC_API_KEY`` set for provider ``claude`` would otherwise bill
    Claude Code to that key instead of the user's subscription), plus the marker. The agent's login
    lives in its own config directory."""

    ours = {name for entry in usable_providers().values() for name in (*entry.key_envs, entry.base_url_env) if name}
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.upper().startswith("COLIBRI_") and name not in ours
    }
    env[NESTING_MARKER] = spec.name
    return env


def nested_in() -> str | None:
    """The agent this process runs under, when an agent colibri-router started launched it."""
    return os.environ.get(NESTING_MARKER) or None


def _agent(spec: ProviderSpec) -> AgentCli:
    if spec.agent is None:
        raise AssertionError(f"{spec.name} is no agent-cli provider")
    return spec.agent
