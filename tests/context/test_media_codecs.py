"""Each wire's codec encodes media parts, and a tool's returned images, in its own shape (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from colibri_router.conversation import CompletionRequest, Media, Message, Text, ToolCall, ToolResult, ToolSpec
from colibri_router.errors import InvalidRequestError
from colibri_router.providers import BUILTIN
from colibri_router.wires import codec_for

SHOT = Media("image", "image/png", "aGVsbG8=")
URL_SHOT = Media("image", "image/jpeg", url="https://example.test/a.jpg")
PDF = Media("document", "application/pdf", "JVBERi0=", title="spec.pdf")
TOOLS = (ToolSpec("shot", {"type": "object"}),)


def loop(*user_parts: Any) -> CompletionRequest:
    """A tool call answered by a result holding a screenshot, then ``user_parts``."""
    return CompletionRequest(
        model="m",
        messages=(
            Message("user", (Text("go"),)),
            Message("assistant", (ToolCall("call_1", "shot", {}),)),
            Message("user", (ToolResult("call_1", "captured", media=(SHOT,)), *user_parts)),
        ),
        max_tokens=100,
        tools=TOOLS,
    )


def encode(provider: str, model: str, request: CompletionRequest) -> dict[str, Any]:
    body: dict[str, Any] = codec_for(BUILTIN[provider], model).encode(request).body
    return body


def test_anthropic_keeps_the_screenshot_inside_its_tool_result() -> None:
    body = encode("claude", "claude-sonnet-4-5", loop(Text("what changed?")))
    result = body["messages"][2]["content"][0]
    assert result["content"] == [
        {"type": "text", "text": "captured"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="}},
    ]


def test_anthropic_sends_urls_and_titled_documents() -> None:
    body = encode("claude", "claude-sonnet-4-5", CompletionRequest("m", (Message("user", (URL_SHOT, PDF)),), 10))
    image, document = body["messages"][0]["content"]
    assert image == {"type": "image", "source": {"type": "url", "url": "https://example.test/a.jpg"}}
    assert document["title"] == "spec.pdf"


def test_openai_sends_the_tools_images_in_the_user_message_after_its_result() -> None:
    messages = encode("openai", "gpt-4.1", loop(Text("what changed?")))["messages"]
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "captured"}
    assert messages[3] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "(returned by tool call call_1)"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}},
            {"type": "text", "text": "what changed?"},
        ],
    }


def test_openai_file_parts_need_content() -> None:
    request = CompletionRequest(
        "m", (Message("user", (Media("document", "application/pdf", url="https://x.test/a.pdf"),)),), 10
    )
    with pytest.raises(InvalidRequestError, match="PDF given by URL"):
        encode("openai", "gpt-4.1", request)


def test_gemini_puts_the_tools_image_after_the_function_response() -> None:
    contents = encode("gemini", "gemini-3.5-flash", loop())["contents"]
    parts = contents[2]["parts"]
    assert parts[0]["functionResponse"]["response"] == {"output": "captured"}
    assert parts[1] == {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}}


def test_ollama_sends_bare_base64_on_the_user_message_after_the_result() -> None:
    messages = encode("ollama", "llava", loop())["messages"]
    assert messages[-2]["role"] == "tool"
    assert messages[-1] == {"role": "user", "content": "", "images": ["aGVsbG8="]}
    with pytest.raises(InvalidRequestError, match="image by URL"):
        encode("ollama", "llava", CompletionRequest("m", (Message("user", (URL_SHOT,)),), 10))


def test_cohere_sends_image_url_parts_and_refuses_pdf_parts() -> None:
    messages = encode("cohere", "command-a-vision-07-2025", loop(Text("and?")))["messages"]
    assert messages[-1]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}
    with pytest.raises(InvalidRequestError, match="takes no PDF parts"):
        encode("cohere", "command-a-vision-07-2025", CompletionRequest("m", (Message("user", (PDF,)),), 10))


def test_text_only_turns_stay_plain_strings_on_openai() -> None:
    request = CompletionRequest("m", (Message("user", (Text("a"), Text("b"))),), 10)
    assert encode("deepseek", "deepseek-chat", request)["messages"] == [{"role": "user", "content": "ab"}]
