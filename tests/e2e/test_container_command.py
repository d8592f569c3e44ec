"""The container's command and healthcheck, run for real without Docker: the Dockerfile's
ENTRYPOINT + CMD with the environment compose.yaml gives it (a read-only tokens file, the allowed
hosts, a PostgreSQL URL), then the Dockerfile's HEALTHCHECK command against it, then an MCP call.

Only the address differs: tests listen on 127.0.0.1 and a free port, never 0.0.0.0:8000, so the
host and port are swapped in both the command and the healthcheck's URL.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from container_files import compose_service, healthcheck_command, image_command, stages
from harness import SERVER_COMMAND
from http_harness import free_port, http_session, tokens_for

pytestmark = pytest.mark.e2e


def compose_environment(database_url: str, tokens_file: Path) -> dict[str, str]:
    """compose.yaml's environment for the router, with its ``${VAR:-default}`` defaults applied and
    the database and the tokens file's place swapped for the test's."""
    environment = {}
    for name, value in compose_service("colibri-router")["environment"].items():
        environment[name] = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", str(value))
    environment["COLIBRI_DATABASE_URL"] = database_url
    environment["COLIBRI_HTTP_TOKENS_FILE"] = str(tokens_file)
    return environment


def healthy(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)


@contextmanager
def image_server(command: list[str], env: dict[str, str], log: Path, check: list[str]) -> Iterator[None]:
    """The server running ``command``, once the healthcheck ``check`` passes; then stopped with
    SIGTERM (as ``docker stop`` does), which must end it gracefully."""
    with log.open("a") as stderr:
        process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        result = healthy(check)
        while result.returncode != 0 and time.monotonic() < deadline:
            assert process.poll() is None, f"the server exited with {process.returncode}:\n{log.read_text()}"
            time.sleep(0.1)
            result = healthy(check)
        assert result.returncode == 0, f"the healthcheck never passed: {result.stderr}\n{log.read_text()}"
        yield
    finally:
        process.terminate()
        process.wait(15)
    # uvicorn finishes its graceful shutdown, then ends by the signal it was sent (as a shell expects).
    assert process.returncode in (0, -signal.SIGTERM), log.read_text()
    assert "Application shutdown complete." in log.read_text()


async def test_the_images_command_serves_and_its_healthcheck_says_so(
    server_env: dict[str, str],
    server_log: Path,
    tmp_path: Path,
    fresh_postgres_database: Callable[[], str],
) -> None:
    _, final = stages()
    command = image_command(final)
    assert command[0] == "colibri-router"
    port = str(free_port())
    command = [SERVER_COMMAND, *command[1:]]
    command[command.index("--host") + 1] = "127.0.0.1"
    command[command.index("--port") + 1] = port
    check = healthcheck_command(final)
    check = [sys.executable, *check[1:-1], check[-1].replace("127.0.0.1:8000", f"127.0.0.1:{port}")]
    assert f"127.0.0.1:{port}/healthz" in check[-1]

    tokens_file = tmp_path / "tokens"
    token = tokens_for(tokens_file, "alice")["alice"]
    tokens_file.chmod(0o444)  # mounted read-only: the server only reads it
    env = {**server_env, **compose_environment(fresh_postgres_database(), tokens_file)}
    with image_server(command, env, server_log, check):
        async with http_session(f"http://127.0.0.1:{port}/mcp", token) as session:
            listed = await session.list_tools()
            usage = await session.call_tool("router_usage", {"since": "today"})
    assert "router_call" in {tool.name for tool in listed.tools}
    assert not usage.is_error, usage  # the store is the PostgreSQL database, reached and migrated
    assert healthy(check).returncode != 0  # and it says so when nothing answers
