"""README's "From a local checkout" host config, run exactly as a host runs it: the JSON block's
command and args (the checkout's path put in), started by the official MCP client in another
directory, the user's project. A relative ``files`` entry must be read from that project, so the
command must keep the host's working directory (``uv run --project`` does; ``uv run --directory``
moves the server into the checkout, where the file is not)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from docs_pages import code_blocks, section
from fake_upstream import FakeUpstream, kimi_text
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]
PLACEHOLDER = "/absolute/path/to/colibri-router"
NOTE = "The deploy window is Tuesday 14:00 UTC; ask Priya before touching the database."


def documented_server() -> dict[str, Any]:
    """The server entry of the section's one JSON block, with this checkout in place of the placeholder."""
    (block,) = code_blocks(section("README.md", "From a local checkout"), "json")
    entry: dict[str, Any] = json.loads(block.replace(PLACEHOLDER, str(ROOT)))["mcpServers"]["colibri-router"]
    assert entry["command"] == "uv" and str(ROOT) in entry["args"], entry
    return entry


async def call_with_a_relative_file(
    command: str, args: list[str], env: dict[str, str], project: Path, log: Path
) -> dict[str, Any]:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=project)
    with log.open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("router_call", {"prompt": "When is the deploy?", "files": ["notes.md"]})
    structured: dict[str, Any] = result.structured_content or {}
    return structured | {"is_error": result.is_error}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The user's project, where the host runs: not the checkout."""
    path = tmp_path / "my-project"
    path.mkdir()
    (path / "notes.md").write_text(NOTE + "\n", encoding="utf-8")
    return path


@pytest.fixture
def env(server_env: dict[str, str]) -> dict[str, str]:
    # What a host passes, plus uv's own: its cache, offline (the checkout's environment is already synced).
    extra = {name: os.environ[name] for name in ("HOME", "UV_CACHE_DIR") if name in os.environ}
    return {**server_env, **extra, "UV_OFFLINE": "1"}


async def test_the_documented_local_checkout_command_reads_files_from_the_hosts_directory(
    fake_upstream: FakeUpstream, project: Path, env: dict[str, str], server_log: Path
) -> None:
    entry = documented_server()
    fake_upstream.kimi.enqueue(kimi_text("Tuesday at 14:00 UTC."))

    result = await call_with_a_relative_file(entry["command"], entry["args"], env, project, server_log)

    assert not result["is_error"], (result, server_log.read_text())
    assert result["content"] == "Tuesday at 14:00 UTC."
    assert [read["path"] for read in result["files_read"]] == ["notes.md"]
    (request,) = fake_upstream.kimi.requests
    assert NOTE in json.dumps(request.body, ensure_ascii=False)


async def test_uv_run_directory_would_have_read_the_checkout_instead(
    fake_upstream: FakeUpstream, project: Path, env: dict[str, str], server_log: Path
) -> None:
    # Why the README does not use it: the same call, started the same way, finds no notes.md.
    args = ["run", "--directory", str(ROOT), "colibri-router"]

    result = await call_with_a_relative_file("uv", args, env, project, server_log)

    assert result["is_error"] and result["error"]["code"] == "INVALID_REQUEST", result
    assert "notes.md" in result["error"]["message"]
    assert fake_upstream.kimi.requests == []
