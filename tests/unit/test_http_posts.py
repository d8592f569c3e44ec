"""How ``serve --http`` shapes an answer without a progress token (``server/posts.py``), in process with
the real app and a shortened keep-alive: one JSON body when it comes in time, else an SSE stream that
keeps the connection busy until the answer is its one ``message`` event; JSON only for a client that
accepts nothing else. (Over a real socket: tests/e2e/test_http_server.py.)"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from fake_upstream import FakeUpstream, kimi_text

from colibri_router.server import posts
from colibri_router.server.http import HttpOptions, build_app, plan
from colibri_router.settings import load_settings

KIMI_KEY = "sk-kimi-posts-secret-0123456789"
KEEPALIVE_S = 0.2
BOTH = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CALL = {
    "jsonrpc": "2.0",
    "id": 5,
    "method": "tools/call",
    "params": {"name": "router_call", "arguments": {"prompt": "slow"}},
}


@pytest.fixture(autouse=True)
def upstream(monkeypatch: pytest.MonkeyPatch, fake_upstream: FakeUpstream) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", KIMI_KEY)
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    monkeypatch.setattr(posts, "KEEPALIVE_S", KEEPALIVE_S)


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[httpx.AsyncClient]:
    """The app of ``serve --http`` for the length of the block (its lifespan runs in the test's task)."""
    options = HttpOptions()
    app = build_app(options, plan(options, load_settings()))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000", timeout=30) as http:
            yield http


def _events(stream: str) -> tuple[int, list[dict[str, object]]]:
    """The keep-alive comments before the answer, and each ``message`` event's JSON."""
    comments, messages = 0, []
    for block in stream.split("\n\n"):
        lines = block.splitlines()
        if lines and all(line.startswith(":") for line in lines):
            comments += len(lines)
        elif lines:
            assert lines[0] == "event: message", block
            messages.append(json.loads("".join(line.removeprefix("data: ") for line in lines[1:])))
    return comments, messages


async def test_a_late_answer_becomes_a_stream_kept_alive_until_it_comes(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("at last", delay_s=KEEPALIVE_S * 4))
    async with serving() as client:
        late = await client.post("/mcp", json=CALL, headers=BOTH)
    assert (late.status_code, late.headers["content-type"]) == (200, "text/event-stream")
    comments, messages = _events(late.text)
    assert comments >= 2
    assert len(messages) == 1 and messages[0]["id"] == 5
    assert messages[0]["result"]["structuredContent"]["content"] == "at last"  # type: ignore[index]


async def test_an_answer_in_time_is_one_json_body(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    # A window wide enough for a first call's lazy imports on a loaded machine: "in time" is the rule
    # tested here, not how fast the first call is.
    monkeypatch.setattr(posts, "KEEPALIVE_S", 10.0)
    fake_upstream.kimi.enqueue(kimi_text("soon", delay_s=KEEPALIVE_S / 4))
    async with serving() as client:
        soon = await client.post("/mcp", json=CALL, headers=BOTH)
    assert (soon.status_code, soon.headers["content-type"]) == (200, "application/json")
    assert soon.json()["result"]["structuredContent"]["content"] == "soon"


async def test_a_client_that_accepts_only_json_waits_for_one_json_body(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("at last", delay_s=KEEPALIVE_S * 3))
    async with serving() as client:
        late = await client.post("/mcp", json=CALL, headers={**BOTH, "Accept": "application/json"})
    assert (late.status_code, late.headers["content-type"]) == (200, "application/json")
    assert late.json()["result"]["structuredContent"]["content"] == "at last"


async def test_a_request_too_large_to_read_here_keeps_the_sdks_stream(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text("long read"))
    large = {**CALL, "params": {"name": "router_call", "arguments": {"prompt": "x" * (64 * 1024)}}}
    async with serving() as client:
        answer = await client.post("/mcp", json=large, headers=BOTH)
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert _events(answer.text)[1][0]["result"]["structuredContent"]["content"] == "long read"  # type: ignore[index]
