"""The real ``colibri-router`` process at start-up and at the end: the hello on stderr (a line on a
terminal, a log line under a host, nothing on stdout), and how it ends: one Ctrl-C (on a terminal
and on pipes), SIGTERM, end of input.

Timeouts here only stop a hung test; no assertion is about how fast anything happens.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from harness import SERVER_COMMAND

from colibri_router import __version__

pytestmark = pytest.mark.e2e

HANG_S = 30.0  # far beyond any healthy start or stop: only a hang reaches it
HELLO_EVENT = "serving MCP on stdio, waiting for a host"


@pytest.fixture
def kimi_only_env(server_env: dict[str, str]) -> dict[str, str]:
    """A host's environment with a key for Kimi and none for Claude."""
    return {name: value for name, value in server_env.items() if name != "ANTHROPIC_API_KEY"}


@contextmanager
def server_on_pipes(env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [SERVER_COMMAND], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(HANG_S)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def hello_record(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Read stderr up to the hello log line (the server is about to serve) and return it."""
    assert process.stderr is not None
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        if not select.select([process.stderr], [], [], 0.1)[0]:
            continue
        line = process.stderr.readline()
        if not line:
            raise AssertionError(f"the server ended (status {process.wait(HANG_S)}) without its hello line")
        record: dict[str, Any] = json.loads(line)
        if record.get("event") == HELLO_EVENT:
            return record
    raise AssertionError("no hello line on stderr")


def test_under_a_host_the_hello_is_one_info_log_line_and_end_of_input_ends_it(
    kimi_only_env: dict[str, str],
) -> None:
    with server_on_pipes(kimi_only_env) as process:
        record = hello_record(process)
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        process.stdin.close()  # the host goes away
        assert process.wait(HANG_S) == 0
        stdout, rest_of_stderr = process.stdout.read(), process.stderr.read()
    assert record["level"] == "info"
    assert record["version"] == __version__
    assert "kimi" in record["providers_with_key"]
    assert "claude" in record["providers_without_key"]
    assert not set(record["providers_with_key"]) & set(record["providers_without_key"])
    assert stdout == b""  # stdout is the JSON-RPC channel: nothing but answers, and none was asked
    assert b"Traceback" not in rest_of_stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_one_signal_ends_it_on_pipes_without_a_traceback(kimi_only_env: dict[str, str], signum: int) -> None:
    with server_on_pipes(kimi_only_env) as process:
        hello_record(process)
        process.send_signal(signum)
        status = process.wait(HANG_S)  # one signal: a second one is never sent
        assert process.stdout is not None and process.stderr is not None
        stdout, stderr = process.stdout.read(), process.stderr.read()
    assert status == -signum  # ended by the signal, as a shell or a host expects
    assert stdout == b""
    assert b"Traceback" not in stderr
    assert b"KeyboardInterrupt" not in stderr


def test_on_a_terminal_it_says_hello_in_one_line_and_one_ctrl_c_ends_it(kimi_only_env: dict[str, str]) -> None:
    pid, terminal = pty.fork()  # stdin, stdout and stderr on one terminal, as in `uv run colibri-router`
    if pid == 0:  # the child: become the server
        become_server(kimi_only_env)
    try:
        shown = read_terminal_until(terminal, b"\n")
        os.write(terminal, b"\x03")  # Ctrl-C, typed: the terminal sends SIGINT to the server
        _, wait_status = wait_for(pid)
        shown += read_terminal_rest(terminal)
    finally:
        os.close(terminal)
    hello, _, rest = shown.decode().partition("\r\n")
    facts, _, names = hello.partition("; providers with a key: ")
    assert facts == f"colibri-router {__version__}: MCP on stdio, waiting for a host (Ctrl-D or Ctrl-C to quit)"
    assert "kimi" in names.split(", ")
    assert "claude" not in names.split(", ")
    assert os.WIFSIGNALED(wait_status) and os.WTERMSIG(wait_status) == signal.SIGINT
    assert rest.strip() in ("", "^C")  # the terminal's echo of the keystroke, nothing from the server


def test_on_a_terminal_with_no_key_the_hello_says_which_variable_to_set(kimi_only_env: dict[str, str]) -> None:
    env = {name: value for name, value in kimi_only_env.items() if not name.endswith("_API_KEY")}
    pid, terminal = pty.fork()
    if pid == 0:
        become_server(env)
    try:
        hello = read_terminal_until(terminal, b"\n").decode().strip()
        os.write(terminal, b"\x04")  # Ctrl-D: end of input
        _, wait_status = wait_for(pid)
    finally:
        os.close(terminal)
    assert hello.endswith("; no provider has a key yet (set e.g. COLIBRI_KIMI_API_KEY)")
    assert os.WIFEXITED(wait_status) and os.WEXITSTATUS(wait_status) == 0


def become_server(env: dict[str, str]) -> None:
    """In the forked child: exec the server, or end at once (never back into pytest)."""
    try:
        os.execve(SERVER_COMMAND, [SERVER_COMMAND], env)
    finally:
        os._exit(127)


def read_terminal_until(terminal: int, end: bytes) -> bytes:
    shown = b""
    deadline = time.monotonic() + HANG_S
    while end not in shown:
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing like a hello line on the terminal, only {shown!r}")
        if select.select([terminal], [], [], 0.1)[0]:
            shown += os.read(terminal, 4096)
    return shown


def read_terminal_rest(terminal: int) -> bytes:
    """What is left on the terminal once the server has ended (Linux reports EIO at the end)."""
    shown = b""
    try:
        while select.select([terminal], [], [], 0)[0] and (chunk := os.read(terminal, 4096)):
            shown += chunk
    except OSError:
        pass
    return shown


def wait_for(pid: int) -> tuple[int, int]:
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return done, status
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the server did not end")
