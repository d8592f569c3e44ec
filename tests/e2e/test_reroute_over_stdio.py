"""A turn goes to a model that can read it, through the real server over stdio with the official MCP
client, against the strict fake upstream (whose DeepSeek route rejects images as the real service
does): with COLIBRI_VISION_MODEL=gemini-flash a screenshot sent to deepseek-chat is answered by Gemini
with a warning saying so, and the ledger names Gemini; without it the call is refused naming the
setting; the config file's [routing] sends a PDF and a long conversation on, in router_call, a thread
continuation and router_ask_many."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text, gemini_text, openai_text
from harness import every_provider_env, router_session
from media_samples import document_block, image_block, pdf_with_text, png

pytestmark = pytest.mark.e2e

FLASH = "gemini-3.5-flash"
SCREENSHOT = [{"type": "text", "text": "What is on this screen?"}, image_block(png(8, 6))]
WARNING = f"deepseek-chat cannot read images: sent to {FLASH} instead (COLIBRI_VISION_MODEL)"


@pytest.fixture
def env(fake_upstream: FakeUpstream) -> dict[str, str]:
    return every_provider_env(fake_upstream) | {
        "GEMINI_API_KEY": "gemini-e2e-secret-0123456789",
        "GEMINI_BASE_URL": fake_upstream.base_url("gemini"),
    }


async def call(session: Any, tool: str = "router_call", **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    structured: dict[str, Any] = result.structured_content or {}
    text = result.content[0].text
    assert json.loads(text.split("\n", 1)[1] if result.is_error else text) == structured
    return structured | {"is_error": result.is_error}


def chats(fake: FakeUpstream, route: str) -> list[Any]:
    return [request for request in fake.route(route).requests if request.endpoint == "chat"]


async def test_a_screenshot_sent_to_deepseek_is_answered_by_gemini_with_a_warning(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.gemini.enqueue(gemini_text("A login form with an empty password field.", model=FLASH))
    async with router_session(env | {"COLIBRI_VISION_MODEL": "gemini-flash"}, server_log) as session:
        result = await call(session, model="deepseek-chat", messages=[{"role": "user", "content": SCREENSHOT}])
        usage = await call(session, "router_usage", since="today", by="model")
    assert not result["is_error"], result
    assert (result["provider"], result["model"]) == ("gemini", FLASH)
    assert result["content"] == "A login form with an empty password field."
    assert result["warnings"] == [WARNING]
    assert [(a["provider"], a["model"], a["outcome"]) for a in result["attempts"]] == [("gemini", FLASH, "ok")]
    assert [group["key"] for group in usage["groups"]] == [FLASH]
    assert chats(fake_upstream, "deepseek") == [] and len(chats(fake_upstream, "gemini")) == 1
    assert fake_upstream.violations == []


async def test_without_a_vision_model_the_call_is_refused_naming_the_setting(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    async with router_session(env, server_log) as session:
        result = await call(session, model="deepseek-chat", messages=[{"role": "user", "content": SCREENSHOT}])
    assert result["is_error"]
    assert result["error"]["code"] == "INVALID_REQUEST"
    assert "deepseek-chat cannot read images" in result["error"]["message"]
    assert "Set COLIBRI_VISION_MODEL (or [routing] vision in the config file)" in result["error"]["message"]
    assert fake_upstream.requests == []


async def test_the_config_files_routing_in_a_thread_a_pdf_a_long_conversation_and_ask_many(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[routing]\nvision = "gemini-flash"\ndocuments = "sonnet"\nlong_context = "gemini-flash"\n')
    fake_upstream.gemini.enqueue(
        gemini_text("It shows a chart.", model=FLASH),  # the thread's first turn
        gemini_text("The chart rises.", model=FLASH),  # its continuation
        gemini_text("Summarised.", model=FLASH),  # the long conversation
        gemini_text("gemini: a chart", model=FLASH),  # ask_many's deepseek-chat
    )
    fake_upstream.anthropic.enqueue(anthropic_text("Numbers are up."))
    fake_upstream.route("openai").enqueue(openai_text("gpt: a chart", model="gpt-4.1"))
    async with router_session(env | {"COLIBRI_CONFIG": str(config)}, server_log) as session:
        first = await call(
            session, model="deepseek-chat", messages=[{"role": "user", "content": SCREENSHOT}], thread_id="new"
        )
        # The continuation's own turn is text; the thread's history holds the screenshot.
        second = await call(
            session,
            model="deepseek-chat",
            messages=[{"role": "user", "content": "Does it rise?"}],
            thread_id=first["thread_id"],
        )
        report = [{"type": "text", "text": "Summarise."}, document_block(pdf_with_text("Quarterly numbers"))]
        pdf = await call(session, model="deepseek-chat", messages=[{"role": "user", "content": report}])
        long = await call(session, model="deepseek-chat", prompt="lorem ipsum dolor sit amet " * 7_800)
        many = await call(
            session,
            "router_ask_many",
            messages=[{"role": "user", "content": SCREENSHOT}],
            models=["deepseek-chat", "gpt-4.1"],
        )
        usage = await call(session, "router_usage", since="today", by="model")
    for result in (first, second, pdf, long, many):
        assert not result["is_error"], result
    vision = f"deepseek-chat cannot read images: sent to {FLASH} instead ([routing] vision)"
    assert (first["model"], first["warnings"]) == (FLASH, [vision])
    assert (second["model"], second["thread_id"], second["warnings"]) == (FLASH, first["thread_id"], [vision])
    assert (pdf["provider"], pdf["content"]) == ("claude", "Numbers are up.")
    assert pdf["warnings"] == [
        "deepseek-chat reads no PDFs (only their extracted text): sent to claude-sonnet-4-5 instead "
        "([routing] documents)"
    ]
    assert long["model"] == FLASH and long["warnings"][0].endswith(f"sent to {FLASH} instead ([routing] long_context)")
    rerouted, direct = many["answers"]
    assert (rerouted["provider"], rerouted["model"], rerouted["warnings"]) == ("gemini", FLASH, [vision])
    assert (direct["model"], direct["content"]) == ("gpt-4.1", "gpt: a chart")
    assert {group["key"]: group["calls"] for group in usage["groups"]} == {
        FLASH: 4,
        "claude-sonnet-4-5": 1,
        "gpt-4.1": 1,
    }
    assert chats(fake_upstream, "deepseek") == [] and fake_upstream.violations == []
