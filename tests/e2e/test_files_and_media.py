"""`files`, images and documents through the real server over stdio with the official MCP client,
against the strict fake upstream: numbered files reach the model, an image reaches Gemini natively,
a screenshot returned by a tool survives a loop that moves Claude → Gemini → OpenAI, and a model that
reads no images is refused before any request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_text,
    anthropic_tool_use,
    gemini_text,
    gemini_tool_calls,
    openai_text,
)
from harness import router_session
from media_samples import b64, image_block, png

pytestmark = pytest.mark.e2e

SHOT_1, SHOT_2 = png(6, 4, (255, 0, 0)), png(5, 5, (0, 0, 255))
SCREENSHOT_TOOL = {"name": "screenshot", "description": "Capture the screen", "input_schema": {"type": "object"}}


@pytest.fixture
def env(server_env: dict[str, str], fake_upstream: FakeUpstream, tmp_path: Path) -> dict[str, str]:
    workspace = tmp_path / "project"
    (workspace / "src").mkdir(parents=True)
    (workspace / "docs").mkdir()
    (workspace / "src/app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (workspace / "docs/screen.png").write_bytes(SHOT_1)
    return {
        **server_env,
        "COLIBRI_WORKSPACE": str(workspace),
        "GEMINI_API_KEY": "gemini-e2e-secret-0123456789",
        "GEMINI_BASE_URL": fake_upstream.base_url("gemini"),
        "OPENAI_API_KEY": "sk-openai-e2e-secret-0123456789",
        "OPENAI_BASE_URL": fake_upstream.base_url("openai"),
        "DEEPSEEK_API_KEY": "sk-deepseek-e2e-secret-0123456789",
        "DEEPSEEK_BASE_URL": fake_upstream.base_url("deepseek"),
    }


async def call(session: Any, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool("router_call", arguments)
    structured: dict[str, Any] = result.structured_content or {}
    text = result.content[0].text
    # A failure's text is `CODE: message` and then the same object on the next line.
    assert json.loads(text.split("\n", 1)[1] if result.is_error else text) == structured
    return structured | {"is_error": result.is_error}


async def test_review_this_change_files_with_line_numbers_and_a_screenshot_reach_gemini(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.gemini.enqueue(gemini_text("Looks right."))
    async with router_session(env, server_log) as session:
        result = await call(
            session, prompt="Review this change", files=["src/app.py", "docs/screen.png"], model="gemini-3.5-flash"
        )
    assert not result["is_error"], result
    assert result["files_read"] == [
        {"path": "src/app.py", "bytes": 32, "tokens_estimated": result["files_read"][0]["tokens_estimated"]},
        {"path": "docs/screen.png", "bytes": len(SHOT_1), "tokens_estimated": 1600},
    ]
    assert fake_upstream.violations == []
    [request] = fake_upstream.gemini.requests
    parts = request.body["contents"][0]["parts"]
    assert parts[0] == {"text": "Review this change"}
    assert '<file path="src/app.py">\n   1│ def add(a, b):\n   2│     return a + b\n</file>' in parts[1]["text"]
    assert parts[2] == {"inlineData": {"mimeType": "image/png", "data": b64(SHOT_1)}}


async def test_files_reach_claude_with_line_numbers(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("Fine."))
    async with router_session(env, server_log) as session:
        result = await call(session, prompt="Review", files=["src/*.py"], model="claude-sonnet-4-5")
    assert not result["is_error"], result
    content = fake_upstream.anthropic.requests[0].body["messages"][0]["content"]
    assert content[1]["text"].strip("\n").splitlines()[1:3] == ["   1│ def add(a, b):", "   2│     return a + b"]


async def test_a_screenshot_from_a_tool_survives_claude_then_gemini_then_openai(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_tool_use([("toolu_01", "screenshot", {})], text="Looking."))
    fake_upstream.gemini.enqueue(gemini_tool_calls([("screenshot", {})], ids=True, signatures=True))
    fake_upstream.route("openai").enqueue(openai_text("Two screenshots: red, then blue."))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "What changed on screen?"}]
    shots = iter([SHOT_1, SHOT_2])
    async with router_session(env, server_log) as session:
        for model in ("claude-sonnet-4-5", "gemini-3.5-flash", "gpt-4.1"):
            result = await call(session, messages=messages, tools=[SCREENSHOT_TOOL], model=model)
            assert not result["is_error"], result
            messages.append(result["message"] or {"role": "assistant", "content": result["content"]})
            for tool_call in result["tool_calls"]:
                screenshot = [{"type": "text", "text": "captured"}, image_block(next(shots))]
                messages.append(
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": tool_call["id"], "content": screenshot}],
                    }
                )
    assert result["content"] == "Two screenshots: red, then blue."
    assert fake_upstream.violations == []
    gemini = fake_upstream.gemini.requests[0].body["contents"]
    assert gemini[2]["parts"][0]["functionResponse"]["response"] == {"output": "captured"}
    assert gemini[2]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": b64(SHOT_1)}}
    openai = fake_upstream.route("openai").requests[0].body["messages"]
    images = [
        part["image_url"]["url"]
        for message in openai
        if message["role"] == "user" and isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]
    assert images == [f"data:image/png;base64,{b64(SHOT_1)}", f"data:image/png;base64,{b64(SHOT_2)}"]
    assert [m["content"] for m in openai if m["role"] == "tool"] == ["captured", "captured"]


async def test_a_model_without_vision_is_refused_before_any_request(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    async with router_session(env, server_log) as session:
        result = await call(session, prompt="What is this?", files=["docs/screen.png"], model="deepseek-chat")
    assert result["is_error"]
    assert result["error"]["code"] == "INVALID_REQUEST"
    assert "deepseek-chat cannot read images" in result["error"]["message"]
    assert fake_upstream.requests == []
