"""The real command-line agents for the end-to-end tests: where they are, and homes that keep them off
the machine's own logins and configuration.

``tests/agent-clis/package.json`` pins the versions (about 900 MB of npm packages). They live outside
the checkout, in the user's cache directory (``$XDG_CACHE_HOME/colibri-router-tests/agent-clis/<lock
hash>``, or ``COLIBRI_TEST_NPM_DIR``), so a fresh clone or a CI run on the same machine installs them
once: :func:`agent_bin_dir` runs ``npm ci --prefer-offline`` there on first use, under a file lock that
parallel test workers share. Where Node is missing, or the install fails (no registry), the tests skip
saying why; under CI (``CI=true``) a failed install fails them instead, so it cannot pass unseen.

Each test gets a temporary HOME holding the agents' own configuration, pointed at the scripted
loopback model (:mod:`agent_upstream`): Claude Code through ``ANTHROPIC_BASE_URL``, Codex through a
``model_providers`` entry in ``$CODEX_HOME/config.toml``, Gemini CLI through
``GOOGLE_GEMINI_BASE_URL`` with API-key auth selected in its settings. Their keys are in their own
files (Claude Code's ``apiKeyHelper``, Gemini CLI's ``~/.gemini/.env``): colibri-router passes an
agent none of its providers' variables. Their telemetry, update
checks and error reporting are switched off.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from agent_upstream import API_KEY, AgentUpstream
from filelock import FileLock
from platformdirs import user_cache_path

AGENT_CLIS = Path(__file__).parent / "agent-clis"
PACKAGE_FILES = ("package.json", "package-lock.json")
COMMANDS = {"claude-code": "claude", "codex": "codex", "gemini-cli": "gemini"}


def agent_bin_dir() -> Path:
    """``node_modules/.bin`` with the three CLIs (and the other pinned packages); skips where Node is
    missing or the packages cannot be installed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed: the command-line agents' end-to-end tests need them")
    installed = _installed()
    if isinstance(installed, str):
        if os.environ.get("CI") == "true":
            pytest.fail(installed)
        pytest.skip(installed)
    return installed


def install_dir() -> Path:
    """Where the pinned packages are installed: one directory per version of the lock file."""
    lock = hashlib.sha256(b"".join((AGENT_CLIS / name).read_bytes() for name in PACKAGE_FILES)).hexdigest()[:16]
    root = os.environ.get("COLIBRI_TEST_NPM_DIR")
    base = Path(root) if root else user_cache_path("colibri-router-tests") / "agent-clis"
    return base / lock


@functools.cache
def _installed() -> Path | str:
    """The installed ``.bin`` directory, or why it could not be installed."""
    target = install_dir()
    bin_dir = target / "node_modules" / ".bin"
    target.mkdir(parents=True, exist_ok=True)
    with FileLock(target.parent / f"{target.name}.lock"):  # another test worker may be installing them
        if (target / "installed").exists():
            return bin_dir
        for name in PACKAGE_FILES:
            shutil.copyfile(AGENT_CLIS / name, target / name)
        done = subprocess.run(
            ["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--prefix", str(target)],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0 or not all((bin_dir / command).exists() for command in COMMANDS.values()):
            return f"npm ci of tests/agent-clis into {target} failed:\n{done.stderr[-2000:]}"
        (target / "installed").touch()
    return bin_dir


def agent_env(
    upstream: AgentUpstream, home: Path, *, mcp_marker: Path | None = None, logged_in: bool = True
) -> dict[str, str]:
    """The agents' variables and their configuration under ``home``: each API pointed at ``upstream``.
    ``mcp_marker``: each CLI's config also names an MCP server that creates this file when started."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    server = {"command": "sh", "args": ["-c", f"touch {mcp_marker}; sleep 5"]} if mcp_marker else None
    codex = [
        'model_provider = "scripted"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[model_providers.scripted]",
        'name = "scripted"',
        f'base_url = "{upstream.url}/responses/v1"',
        'env_key = "SCRIPTED_OPENAI_KEY"',
        'wire_api = "responses"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
    ]
    if server:
        codex += ["[mcp_servers.colibri]", 'command = "sh"', f"args = {json.dumps(server['args'])}"]
    (codex_home / "config.toml").write_text("\n".join(codex) + "\n")
    gemini: dict[str, object] = {
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    if logged_in:
        gemini["security"] = {"auth": {"selectedType": "gemini-api-key"}}
    if server:
        gemini["mcpServers"] = {"colibri": server}
    (home / ".gemini" / "settings.json").write_text(json.dumps(gemini))
    # The agents' own logins live in their own files: colibri-router passes them none of its keys.
    claude: dict[str, object] = {"env": {"ANTHROPIC_BASE_URL": f"{upstream.url}/anthropic"}}
    if logged_in:
        claude["apiKeyHelper"] = f"echo {API_KEY}"
        (home / ".gemini" / ".env").write_text(f"GEMINI_API_KEY={API_KEY}\n")
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(claude))
    if server:
        (home / ".claude.json").write_text(json.dumps({"mcpServers": {"colibri": {"type": "stdio", **server}}}))
    env = {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "SCRIPTED_OPENAI_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": f"{upstream.url}/gemini",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "GEMINI_TELEMETRY_ENABLED": "false",
    }
    return env
