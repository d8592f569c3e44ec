"""`files` in router_call: the blocks reach the last user turn, the result says what was sent, the
context limit refuses before anything is sent, and a thread keeps what was sent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from colibri_router import store as store_module
from colibri_router.call.service import serve
from colibri_router.errors import ColibriError
from colibri_router.schema import RouterCallInput
from colibri_router.token_estimate import request_tokens

Handler = Callable[[httpx.Request], httpx.Response]
NUMBERED = '\n<file path="src/app.py">\n   1│ def add(a, b):\n   2│     return a + b\n</file>\n'


def claude_reply(request: httpx.Request) -> httpx.Response:
    body = {
        "type": "message",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "looks fine"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }
    return httpx.Response(200, json=body)


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "claude-key-123456")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://claude.test")
    monkeypatch.setattr(store_module, "_shared", {})
    workspace = tmp_path / "project"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src/app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(workspace))
    return workspace


async def call(handler: Handler = claude_reply, **args: Any) -> tuple[Any, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return handler(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as client:
        request = RouterCallInput.model_validate({"model": "claude-sonnet-4-5", **args})
        return await serve(request, client=client), sent


def texts(message: dict[str, Any]) -> list[str]:
    return [block["text"] for block in message["content"] if block["type"] == "text"]


async def test_a_prompt_with_files_becomes_one_user_turn_with_the_numbered_file_after_it() -> None:
    result, [sent] = await call(prompt="Review this", files=["src/app.py"])
    [turn] = sent["messages"]
    assert texts(turn) == ["Review this", NUMBERED]
    dumped = result.model_dump(mode="json")
    assert dumped["files_read"] == [{"path": "src/app.py", "bytes": 32, "tokens_estimated": -(-len(NUMBERED) // 4)}]


async def test_files_go_into_the_last_user_turn_of_a_conversation() -> None:
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "now this"}]},
    ]
    _, [sent] = await call(messages=messages, files=["src/app.py"])
    assert [texts(m) for m in sent["messages"]] == [["first"], ["ok"], ["now this", NUMBERED]]


async def test_without_files_the_result_has_no_files_read_field() -> None:
    result, _ = await call(prompt="hi")
    assert "files_read" not in result.model_dump(mode="json")


async def test_file_warnings_reach_the_result(environment: Path) -> None:
    (environment / "src/blob.bin").write_bytes(b"\x00\x01")
    result, _ = await call(prompt="Review", files=["src"])
    assert "files: src/blob.bin is binary: left out" in result.warnings


async def test_over_the_context_limit_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_CONTEXT_MAX_TOKENS", "10")
    with pytest.raises(ColibriError) as raised:
        await call(prompt="Review", files=["src/app.py"])
    assert raised.value.code == "INVALID_REQUEST"
    assert "over the limit of 10 (COLIBRI_CONTEXT_MAX_TOKENS)" in raised.value.message
    assert "src/app.py ~" in raised.value.message


async def test_the_default_limit_is_the_models_window_minus_max_tokens(
    environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # claude-sonnet-4-5's window in the price data is 200,000 tokens: 800,000 characters is 200,000 tokens.
    (environment / "big.txt").write_text("z" * 799_000, encoding="utf-8")
    monkeypatch.setenv("COLIBRI_FILE_MAX_BYTES", "2000000")
    with pytest.raises(
        ColibriError, match=r"over the limit of 199000 \(claude-sonnet-4-5's context window 200000"
    ) as raised:
        await call(prompt="Review", files=["big.txt"], max_tokens=1000)
    assert "COLIBRI_CONTEXT_MAX_TOKENS overrides it" in raised.value.message  # how to raise it


async def test_an_unknown_models_limit_is_100000_tokens(environment: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (environment / "big.txt").write_text("z" * 400_100, encoding="utf-8")
    with pytest.raises(ColibriError, match=r"over the limit of 100000 \(the default") as raised:
        await call(prompt="Review", files=["big.txt"], model="claude-unpriced-model-x")
    assert "set COLIBRI_CONTEXT_MAX_TOKENS" in raised.value.message


async def test_a_refused_file_sends_nothing(environment: Path) -> None:
    (environment / ".env").write_text("A=1\n", encoding="utf-8")
    sent: list[Any] = []
    with pytest.raises(ColibriError, match="looks like a secret"):
        _, sent = await call(prompt="Review", files=[".env"])
    assert sent == []


async def test_a_thread_stores_the_files_as_sent_and_a_continuation_sees_them(environment: Path) -> None:
    first, _ = await call(prompt="Review", files=["src/app.py"], thread_id="new")
    # The file changes on disk: the continuation still sees what was sent the first time.
    (environment / "src/app.py").write_text("changed\n", encoding="utf-8")
    second, [sent] = await call(prompt="And now?", thread_id=first.thread_id)
    assert texts(sent["messages"][0]) == ["Review", NUMBERED]
    assert "files_read" not in second.model_dump(mode="json")


def test_request_tokens_count_text_and_tool_results() -> None:
    from colibri_router.conversation import CompletionRequest, Message, Text, ToolResult

    request = CompletionRequest(
        model="m",
        messages=(Message("user", (Text("a" * 40), ToolResult("c", "b" * 40))),),
        max_tokens=10,
        system="s" * 8,
    )
    assert request_tokens(request) == 30  # 88 characters at 3 a token, rounded up


def test_media_counts_as_tokens_a_provider_charges_not_as_base64() -> None:
    from colibri_router.conversation import CompletionRequest, Media, Message, Text, ToolResult

    shot = Media("image", "image/png", "A" * 4_000_000)
    request = CompletionRequest(
        model="m",
        messages=(Message("user", (Text("a" * 40), shot, ToolResult("c", "b" * 40, media=(shot,)))),),
        max_tokens=10,
    )
    assert request_tokens(request) == 27 + 2 * 1_600
