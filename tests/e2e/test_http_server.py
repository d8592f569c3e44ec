"""End to end over Streamable HTTP: the real ``colibri-router serve --http`` process, the official MCP
client (``streamable_http_client``), bearer tokens, per-caller threads and usage, progress and
cancellation (routed by caller and request id, and by closing the response), start-up refusals."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fake_upstream import FakeUpstream, kimi_text, kimi_tool_calls
from harness import SERVER_COMMAND, add_turn
from http_harness import (
    MCP_HEADERS,
    cancellation,
    free_port,
    http_server,
    http_session,
    tokens_for,
    tools_call,
)
from mcp.shared.exceptions import MCPError

from colibri_router import __version__

pytestmark = pytest.mark.e2e


@pytest.fixture
def tokens_file(tmp_path: Path, server_env: dict[str, str]) -> Path:
    path = tmp_path / "tokens"
    server_env["COLIBRI_HTTP_TOKENS_FILE"] = str(path)
    return path


def test_healthz_answers_without_a_token(server_env: dict[str, str], server_log: Path, tokens_file: Path) -> None:
    tokens_for(tokens_file, "alice")
    with http_server(server_env, server_log) as url:
        health = httpx.get(url.replace("/mcp", "/healthz"))
        denied = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=MCP_HEADERS)
    assert health.json() == {"status": "ok", "version": __version__}
    assert denied.status_code == 401


async def test_tools_and_a_tool_loop_with_progress_over_http(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, tokens_file: Path
) -> None:
    token = tokens_for(tokens_file, "alice")["alice"]
    fake_upstream.kimi.enqueue(
        kimi_tool_calls([("functions.add:0", "add", '{"a": 2, "b": 3}')]), kimi_text("The sum is 5.")
    )
    updates: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(message)

    messages: list[dict[str, Any]] = [{"role": "user", "content": "add 2 and 3"}]
    with http_server(server_env, server_log) as url:
        async with http_session(url, token) as session:
            listed = await session.list_tools()
            first = await add_turn(session, messages)
            final = await session.call_tool(
                "router_call", {"messages": messages, "tools": [_ADD]}, progress_callback=on_progress
            )
    assert {tool.name for tool in listed.tools} == {
        "router_call",
        "router_ask_many",
        "router_models",
        "router_threads",
        "router_usage",
        "router_run",
        "router_job",
    }
    assert first["tool_calls"][0]["input"] == {"a": 2, "b": 3}
    assert (final.structured_content or {})["content"] == "The sum is 5."
    assert any(message and message.startswith("kimi: ") for message in updates), updates
    # The second request carried the tool result back to Kimi under the id Kimi issued.
    replayed = fake_upstream.kimi.requests[1].body["messages"]
    assert replayed[-1] == {"role": "tool", "tool_call_id": "functions.add:0", "content": "5"}


_ADD = {
    "name": "add",
    "description": "Add two integers.",
    "input_schema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


async def test_a_missing_or_wrong_token_gets_401_and_reaches_no_tool(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, tokens_file: Path
) -> None:
    tokens_for(tokens_file, "alice")
    with http_server(server_env, server_log) as url:
        async with httpx.AsyncClient() as client:
            missing = await client.post(url, json=tools_call(1, {"prompt": "hi"}), headers=MCP_HEADERS)
            wrong_token = {**MCP_HEADERS, "Authorization": "Bearer not-a-token"}
            wrong = await client.post(url, json=tools_call(1, {"prompt": "hi"}), headers=wrong_token)
            # Static tokens and no OAuth server: no RFC 9728 metadata pointing clients at one.
            origin = url.removesuffix("/mcp")
            metadata = [
                await client.get(f"{origin}/.well-known/{name}")
                for name in ("oauth-protected-resource/mcp", "oauth-protected-resource", "oauth-authorization-server")
            ]
        with pytest.raises(ExceptionGroup) as refused:  # the official client cannot even initialize
            async with http_session(url, "not-a-token"):
                pass
    assert refused.group_contains(MCPError)
    assert missing.status_code == wrong.status_code == 401
    assert "Bearer" in missing.headers["www-authenticate"]
    assert "resource_metadata" not in missing.headers["www-authenticate"]
    assert [answer.status_code for answer in metadata] == [404, 404, 404]
    assert fake_upstream.kimi.requests == []
    assert "not-a-token" not in server_log.read_text()


async def test_callers_see_only_their_own_threads_and_usage_and_an_admin_sees_all(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, tokens_file: Path
) -> None:
    tokens = tokens_for(tokens_file, "alice", "bob", "ops")
    server_env["COLIBRI_HTTP_ADMINS"] = "ops"
    with http_server(server_env, server_log) as url:
        async with http_session(url, tokens["alice"]) as alice:
            started = await alice.call_tool("router_call", {"prompt": "alice's secret plan", "thread_id": "new"})
            thread_id = (started.structured_content or {})["thread_id"]
            continued = await alice.call_tool("router_call", {"prompt": "go on", "thread_id": thread_id})
        async with http_session(url, tokens["bob"]) as bob:
            foreign = await bob.call_tool("router_call", {"prompt": "peek", "thread_id": thread_id})
            unknown = await bob.call_tool("router_call", {"prompt": "peek", "thread_id": "th_nosuchthread000000"})
            bob_get = await bob.call_tool("router_threads", {"action": "get", "thread_id": thread_id})
            bob_threads = await bob.call_tool("router_threads", {})
            bob_usage = await bob.call_tool("router_usage", {"since": "today"})
        async with http_session(url, tokens["ops"]) as ops:
            ops_threads = await ops.call_tool("router_threads", {})
            ops_usage = await ops.call_tool("router_usage", {"since": "today"})
    assert not continued.is_error
    for refused in (foreign, unknown, bob_get):
        assert refused.is_error
        assert (refused.structured_content or {})["error"]["code"] == "INVALID_REQUEST"
    assert _error_text(foreign).replace(thread_id, "ID") == _error_text(unknown).replace("th_nosuchthread000000", "ID")
    assert (bob_threads.structured_content or {})["threads"] == []
    # bob's two refused router_calls are his (errors); alice's two calls are not in his totals.
    bob_total = (bob_usage.structured_content or {})["total"]
    assert (bob_total["calls"], bob_total["errors"]) == (2, 2)
    assert [t["thread_id"] for t in (ops_threads.structured_content or {})["threads"]] == [thread_id]
    assert (ops_usage.structured_content or {})["total"]["calls"] == 4


def _error_text(result: Any) -> str:
    return str(result.content[0].text)


async def test_a_cancellation_posted_on_its_own_request_closes_the_upstreamtools_call(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, tokens_file: Path
) -> None:
    tokens = tokens_for(tokens_file, "alice", "bob")
    fake_upstream.kimi.enqueue(kimi_text("too late", hold_open_s=30))
    auth = {name: {**MCP_HEADERS, "Authorization": f"Bearer {token}"} for name, token in tokens.items()}
    cancel = cancellation(7)
    answers: list[httpx.Response] = []
    with http_server(server_env, server_log) as url:
        async with httpx.AsyncClient(timeout=30) as client:

            async def long_call() -> None:
                answers.append(await client.post(url, json=tools_call(7, {"prompt": "long"}), headers=auth["alice"]))

            async with anyio.create_task_group() as calls:
                calls.start_soon(long_call)
                await _wait_for(lambda: len(fake_upstream.kimi.requests) == 1)
                # bob's request 7 is another call: his cancellation must not touch alice's.
                assert (await client.post(url, json=cancel, headers=auth["bob"])).status_code == 202
                assert fake_upstream.wait_disconnect(1.0) is None
                assert (await client.post(url, json=cancel, headers=auth["alice"])).status_code == 202
                cancelled_at = time.monotonic()
                disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)
            after = await client.post(url, json=tools_call(8, {"prompt": "next"}), headers=auth["alice"])
    assert disconnect is not None, "the upstream never saw the connection drop"
    assert disconnect.at - cancelled_at < 1.0
    assert '"code":-32800' in answers[0].text.replace(" ", "")  # answered like the SDK answers a cancelled request
    assert "echo: next" in after.text


@pytest.mark.parametrize("progress", [False, True], ids=["one JSON answer", "SSE stream"])
async def test_closing_the_connection_cancels_thetools_call(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, progress: bool
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("too late", hold_open_s=30))
    call = tools_call(1, {"prompt": "long"})
    if progress:
        call["params"]["_meta"] = {"progressToken": "p1"}
    with http_server(server_env, server_log) as url:
        async with httpx.AsyncClient(timeout=30) as client:
            async with anyio.create_task_group() as calls:
                # Cancelling the request closes its connection, with or without an answer's headers.
                calls.start_soon(lambda: client.post(url, json=call, headers=MCP_HEADERS))
                await _wait_for(lambda: len(fake_upstream.kimi.requests) == 1)
                calls.cancel_scope.cancel()
            closed_at = time.monotonic()
            disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)
            after = await client.post(url, json=tools_call(2, {"prompt": "next"}), headers=MCP_HEADERS)
    assert disconnect is not None, "the upstream never saw the connection drop"
    assert disconnect.at - closed_at < 1.0
    assert "echo: next" in after.text


async def test_a_call_without_a_progress_token_is_one_json_answer_and_one_with_it_a_stream(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    streamed = tools_call(2, {"prompt": "streamed"})
    streamed["params"]["_meta"] = {"progressToken": "p2"}
    with http_server(server_env, server_log) as url:
        async with httpx.AsyncClient(timeout=30) as client:
            single = await client.post(url, json=tools_call(1, {"prompt": "single"}), headers=MCP_HEADERS)
            stream = await client.post(url, json=streamed, headers=MCP_HEADERS)
            tools_list = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
            listed = await client.post(url, json=tools_list, headers=MCP_HEADERS)
    assert single.headers["content-type"] == "application/json"
    assert single.json()["id"] == 1
    assert single.json()["result"]["structuredContent"]["content"] == "echo: single"
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert "event: message" in stream.text and "echo: streamed" in stream.text
    assert listed.headers["content-type"] == "application/json"
    assert "router_call" in {tool["name"] for tool in listed.json()["result"]["tools"]}


async def test_the_official_client_abandoning_a_call_cancels_it(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("too late", hold_open_s=30))
    with http_server(server_env, server_log) as url:
        async with http_session(url) as session:
            with anyio.move_on_after(1.0):
                await session.call_tool("router_call", {"prompt": "long"})
            cancelled_at = time.monotonic()
            disconnect = await anyio.to_thread.run_sync(fake_upstream.wait_disconnect, 5.0)
            after = await session.call_tool("router_call", {"prompt": "next"})
    assert disconnect is not None
    assert disconnect.at - cancelled_at < 1.0
    assert (after.structured_content or {})["content"] == "echo: next"


def test_a_foreign_host_header_is_refused(server_env: dict[str, str], server_log: Path) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with http_server(server_env, server_log) as url:
        foreign = httpx.post(url, json=listing, headers={**MCP_HEADERS, "Host": "evil.example"})
        local = httpx.post(url, json=listing, headers=MCP_HEADERS)
    assert foreign.status_code == 421
    assert local.status_code == 200


async def test_a_token_added_while_serving_works_at_once(
    server_env: dict[str, str], server_log: Path, tokens_file: Path
) -> None:
    tokens_for(tokens_file, "alice")
    with http_server(server_env, server_log) as url:
        added = await anyio.run_process([SERVER_COMMAND, "token", "add", "carol"], env=server_env)
        token = added.stdout.decode().strip()
        async with http_session(url, token) as session:
            usage = await session.call_tool("router_usage", {})
    assert not usage.is_error
    assert f"carol:{_sha256(token)}" in tokens_file.read_text()
    assert token not in added.stderr.decode()


def _sha256(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("extra_env", "args", "says"),
    [
        ({}, ["--host", "0.0.0.0"], "COLIBRI_HTTP_ALLOWED_HOSTS"),
        ({"COLIBRI_HTTP_ALLOWED_HOSTS": "router.example.com"}, ["--host", "0.0.0.0"], "--insecure-no-auth"),
        ({}, ["--path", "mcp"], "--path must start with '/'"),
    ],
)
def test_start_up_refuses_what_would_be_unsafe(
    server_env: dict[str, str], extra_env: dict[str, str], args: list[str], says: str
) -> None:
    refused = subprocess.run(
        [SERVER_COMMAND, "serve", "--http", "--port", str(free_port()), *args],
        env={**server_env, **extra_env},
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert says in refused.stderr


async def _wait_for(condition: Any, timeout_s: float = 10) -> None:
    with anyio.fail_after(timeout_s):
        while not condition():  # noqa: ASYNC110 - the fake records requests in its own threads: nothing to await
            await anyio.sleep(0.02)


async def test_several_workers_serve_the_same_tools(server_env: dict[str, str], server_log: Path) -> None:
    with http_server(server_env, server_log, "--workers", "2") as url:
        async with http_session(url) as session:
            answers = [await session.call_tool("router_call", {"prompt": f"n{i}"}) for i in range(4)]
    assert [(a.structured_content or {})["content"] for a in answers] == [f"echo: n{i}" for i in range(4)]
    assert server_log.read_text().count("Started server process") == 2


async def test_files_over_http_are_refused_without_a_root_and_confined_to_it(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path, tokens_file: Path, tmp_path: Path
) -> None:
    """Over HTTP `files` reads the server's disk: only COLIBRI_HTTP_FILES_ROOT, and nothing outside it."""
    token = tokens_for(tokens_file, "alice")["alice"]
    root = tmp_path / "served"
    root.mkdir()
    (root / "app.py").write_text("print('served')\n", encoding="utf-8")
    (tmp_path / "private.txt").write_text("not for callers\n", encoding="utf-8")
    (root / "escape.txt").symlink_to(tmp_path / "private.txt")
    fake_upstream.kimi.enqueue(kimi_text("Seen."))
    with http_server(server_env, server_log) as url:
        async with http_session(url, token) as session:
            refused = await session.call_tool("router_call", {"prompt": "Review", "files": ["app.py"]})
    assert refused.is_error
    assert "COLIBRI_HTTP_FILES_ROOT" in refused.content[0].text  # type: ignore[union-attr]
    with http_server({**server_env, "COLIBRI_HTTP_FILES_ROOT": str(root)}, server_log) as url:
        async with http_session(url, token) as session:
            read = await session.call_tool("router_call", {"prompt": "Review", "files": ["app.py"]})
            outside = [
                await session.call_tool("router_call", {"prompt": "Review", "files": [entry]})
                for entry in ("../private.txt", str(tmp_path / "private.txt"), "escape.txt")
            ]
    assert not read.is_error, read.content
    assert (read.structured_content or {})["files_read"][0]["path"] == "app.py"
    assert "   1│ print('served')" in fake_upstream.kimi.requests[0].body["messages"][-1]["content"]
    assert all(result.is_error for result in outside)
    assert len(fake_upstream.kimi.requests) == 1  # nothing outside the root was ever sent
