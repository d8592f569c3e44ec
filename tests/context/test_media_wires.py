"""Images and PDFs on every wire, through the router to the strict fake upstream: each wire's native
shape, PDFs as text where the model reads no PDFs, refusals before anything is sent, downscaling."""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream
from media_samples import blank_pdf, document_block, image_block, jpeg, noisy_png, pdf_with_text, png
from pypdf import PdfWriter

from colibri_router.call.service import serve
from colibri_router.errors import ColibriError
from colibri_router.providers import BUILTIN
from colibri_router.schema import RouterCallInput

ROUTES = {"claude": "anthropic", "openai": "openai", "gemini": "gemini", "ollama": "ollama", "cohere": "cohere"}
ROUTES |= {"kimi": "kimi", "mistral": "mistral", "openrouter": "openrouter"}


@pytest.fixture(autouse=True)
def providers(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    for name, route in ROUTES.items():
        spec = BUILTIN[name]
        monkeypatch.setenv(spec.base_url_env, fake_upstream.base_url(route))
        for variable in spec.key_envs:
            monkeypatch.setenv(variable, f"sk-{name}-test-0123456789")
    monkeypatch.setenv("COLIBRI_STORE", "off")
    return fake_upstream


async def ask(model: str, content: list[dict[str, Any]], **args: Any) -> Any:
    request = RouterCallInput.model_validate(
        {"model": model, "messages": [{"role": "user", "content": content}], **args}
    )
    return await serve(request)


def sent(fake: FakeUpstream, route: str) -> dict[str, Any]:
    [request] = fake.route(route).requests
    assert fake.violations == []
    body: dict[str, Any] = request.body
    return body


PNG, PDF = png(), pdf_with_text("Quarterly numbers")
PNG64, PDF64 = base64.b64encode(PNG).decode(), base64.b64encode(PDF).decode()
ASK = [{"type": "text", "text": "What is in these?"}, image_block(PNG), document_block(PDF)]


async def test_claude_gets_image_and_document_blocks(providers: FakeUpstream) -> None:
    result = await ask("claude-sonnet-4-5", ASK)
    content = sent(providers, "anthropic")["messages"][0]["content"]
    assert content[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG64}}
    assert content[2]["type"] == "document"
    assert content[2]["source"] == {"type": "base64", "media_type": "application/pdf", "data": PDF64}
    assert result.warnings == []


async def test_openai_gets_an_image_url_data_url_and_a_file_part(providers: FakeUpstream) -> None:
    await ask("gpt-4.1", ASK)
    content = sent(providers, "openai")["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "What is in these?"}
    assert content[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}}
    assert content[2] == {
        "type": "file",
        "file": {"filename": "document.pdf", "file_data": f"data:application/pdf;base64,{PDF64}"},
    }


async def test_gemini_gets_inline_data(providers: FakeUpstream) -> None:
    await ask("gemini-3.5-flash", ASK)
    parts = sent(providers, "gemini")["contents"][0]["parts"]
    assert parts[1] == {"inlineData": {"mimeType": "image/png", "data": PNG64}}
    assert parts[2] == {"inlineData": {"mimeType": "application/pdf", "data": PDF64}}


async def test_gemini_gets_file_data_for_urls(providers: FakeUpstream) -> None:
    url = {"type": "image", "source": {"type": "url", "url": "https://example.test/shot.png"}}
    await ask("gemini-3.5-flash", [{"type": "text", "text": "see"}, url])
    parts = sent(providers, "gemini")["contents"][0]["parts"]
    assert parts[1] == {"fileData": {"mimeType": "image/png", "fileUri": "https://example.test/shot.png"}}


async def test_ollama_gets_bare_base64_images_and_the_pdfs_text(providers: FakeUpstream) -> None:
    result = await ask("ollama:llava", ASK)
    [message] = sent(providers, "ollama")["messages"]
    assert message["images"] == [PNG64]
    assert "Quarterly numbers" in message["content"] and message["content"].startswith("What is in these?")
    assert "llava cannot read PDFs natively: sent the text of a PDF, extracted locally" in result.warnings


async def test_cohere_vision_gets_image_url_parts_and_the_pdfs_text(providers: FakeUpstream) -> None:
    await ask("command-a-vision-07-2025", ASK)
    content = sent(providers, "cohere")["messages"][0]["content"]
    assert content[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}}
    assert "Quarterly numbers" in content[2]["text"]


@pytest.mark.parametrize(("model", "route"), [("kimi-k2.6", "kimi"), ("mistral-small-latest", "mistral")])
async def test_openai_wire_hosts_get_images_and_pdf_text_where_the_model_reads_no_pdf(
    providers: FakeUpstream, model: str, route: str
) -> None:
    await ask(model, ASK)
    content = sent(providers, route)["messages"][0]["content"]
    assert content[1]["type"] == "image_url"
    assert [part["type"] for part in content] == ["text", "image_url", "text"]
    assert "Quarterly numbers" in content[2]["text"]


async def test_the_type_is_read_from_the_content_not_the_claim(providers: FakeUpstream) -> None:
    await ask("claude-sonnet-4-5", [image_block(jpeg(), media_type="image/png")])
    source = sent(providers, "anthropic")["messages"][0]["content"][0]["source"]
    assert source["media_type"] == "image/jpeg"


@pytest.mark.parametrize(
    ("model", "route", "what"),
    [
        ("deepseek-chat", "deepseek", "images"),
        ("command-a-03-2025", "cohere", "images"),
        ("gpt-3.5-turbo", "openai", "images"),
    ],
)
async def test_a_model_without_vision_is_refused_before_any_request(
    providers: FakeUpstream, monkeypatch: pytest.MonkeyPatch, model: str, route: str, what: str
) -> None:
    monkeypatch.setenv("DEEPSEEK_BASE_URL", providers.base_url("deepseek"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-0123456789")
    with pytest.raises(ColibriError) as raised:
        await ask(model, [{"type": "text", "text": "see"}, image_block(PNG)])
    assert raised.value.code == "INVALID_REQUEST"
    assert f"{model} cannot read {what}" in raised.value.message
    assert providers.requests == []


async def test_a_fallback_chain_skips_a_model_without_vision_with_a_warning(providers: FakeUpstream) -> None:
    result = await ask("gpt-3.5-turbo", [image_block(PNG)], fallback=["gemini-3.5-flash"])
    assert result.provider == "gemini"
    assert result.warnings[0].startswith("skipped gpt-3.5-turbo: gpt-3.5-turbo cannot read images")
    assert [a.outcome for a in result.attempts] == ["INVALID_REQUEST", "ok"]
    assert providers.route("openai").requests == []


async def test_an_image_only_pdf_is_refused_where_pdfs_become_text(providers: FakeUpstream) -> None:
    with pytest.raises(ColibriError, match="holds no text"):
        await ask("kimi-k2.6", [{"type": "text", "text": "read"}, document_block(blank_pdf())])
    assert providers.requests == []
    await ask("claude-sonnet-4-5", [{"type": "text", "text": "read"}, document_block(blank_pdf())])  # native: sent


async def test_an_oversized_image_is_downscaled_keeping_its_aspect_ratio(providers: FakeUpstream) -> None:
    big = noisy_png(1200, 1100)  # about 4 MB: over Claude's 3.75 MB
    result = await ask("claude-sonnet-4-5", [image_block(big)])
    source = sent(providers, "anthropic")["messages"][0]["content"][0]["source"]
    sent_bytes = base64.b64decode(source["data"])
    assert len(source["data"]) <= 5 * 1024 * 1024
    [warning] = result.warnings
    assert "1200x1100" in warning and "sent downscaled to" in warning
    import io

    from PIL import Image

    width, height = Image.open(io.BytesIO(sent_bytes)).size
    assert abs(width / height - 1200 / 1100) < 0.01


async def test_without_pillow_an_oversized_image_is_refused_naming_the_extra(
    providers: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = image_block(noisy_png(1200, 1100))
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ColibriError, match=r"install colibri-router\[images\]"):
        await ask("claude-sonnet-4-5", [big])
    assert providers.requests == []


async def test_more_images_than_the_wire_takes_are_refused(providers: FakeUpstream) -> None:
    with pytest.raises(ColibriError, match="101 images and claude takes at most 100"):
        await ask("claude-sonnet-4-5", [image_block(PNG)] * 101)
    assert providers.requests == []


async def test_a_pdf_by_url_cannot_go_where_only_content_is_taken(providers: FakeUpstream) -> None:
    doc = {"type": "document", "source": {"type": "url", "url": "https://example.test/spec.pdf"}}
    with pytest.raises(ColibriError, match="takes no PDF by URL"):
        await ask("gpt-4.1", [{"type": "text", "text": "read"}, doc])
    with pytest.raises(ColibriError, match="cannot read PDFs, and a PDF is given by URL"):
        await ask("ollama:llava", [{"type": "text", "text": "read"}, doc])
    assert providers.requests == []


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ({"type": "image", "source": {"type": "base64", "media_type": "image/png"}}, "needs its content"),
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "bm90IGFuIGltYWdl"}},
            "not a PNG, JPEG, GIF or WebP image",
        ),
        (
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PNG64}},
            "not a PDF",
        ),
        ({"type": "image", "source": {"type": "file", "file_id": "f1"}}, "is .*base64.* or .*url"),
        ({"type": "image", "source": {"type": "url", "url": "file:///etc/passwd"}}, "needs an http"),
    ],
)
def test_malformed_media_blocks_are_validation_errors(block: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        RouterCallInput.model_validate({"messages": [{"role": "user", "content": [block]}]})


def test_media_blocks_are_refused_in_assistant_turns() -> None:
    with pytest.raises(ValueError, match="belongs in a user message"):
        RouterCallInput.model_validate({"messages": [{"role": "assistant", "content": [image_block(PNG)]}]})


async def test_files_that_are_images_and_pdfs_become_media_parts(
    providers: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/screen.dat").write_bytes(PNG)  # by content, not by name
    (tmp_path / "docs/spec.pdf").write_bytes(PDF)
    (tmp_path / "app.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    request = RouterCallInput.model_validate(
        {"prompt": "Review", "model": "gemini-3.5-flash", "files": ["app.py", "docs"]}
    )
    result = await serve(request)
    parts = sent(providers, "gemini")["contents"][0]["parts"]
    assert parts[0] == {"text": "Review"}
    assert "   1│ x = 1" in parts[1]["text"]
    assert parts[2] == {"inlineData": {"mimeType": "image/png", "data": PNG64}}
    assert parts[3] == {"inlineData": {"mimeType": "application/pdf", "data": PDF64}}
    assert [(f.path, f.tokens_estimated) for f in result.files_read or []][1:] == [
        ("docs/screen.dat", 1600),
        ("docs/spec.pdf", 2000),
    ]


async def test_a_pdf_over_the_wires_page_limit_is_refused(providers: FakeUpstream) -> None:
    writer = PdfWriter()
    for _ in range(101):
        writer.add_blank_page(width=100, height=100)
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(ColibriError, match="has 101 pages and claude reads at most 100"):
        await ask("claude-sonnet-4-5", [{"type": "text", "text": "read"}, document_block(buffer.getvalue())])
    assert providers.requests == []
