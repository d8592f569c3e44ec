"""The fake refuses images and documents as each real service does: wrong media type, missing or
malformed base64, content that is not what it claims, too many images, models that read none."""

from __future__ import annotations

from typing import Any

from fake_upstream import (
    validate_anthropic_request,
    validate_cohere_request,
    validate_gemini_request,
    validate_ollama_request,
    validate_openai_request,
)
from media_samples import b64, jpeg, pdf_with_text, png

PNG = b64(png())


def claude(*blocks: dict[str, Any]) -> list[str]:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": list(blocks)}]}
    return validate_anthropic_request(body)


def image(media_type: str = "image/png", **source: Any) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": PNG, **source}}


def test_anthropic_accepts_a_good_image_and_document() -> None:
    document = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf_with_text())},
    }
    assert claude(image(), document) == []


def test_anthropic_refuses_bad_media() -> None:
    assert "media_type: Input should be" in claude(image("image/bmp"))[0]
    missing = {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
    assert claude(missing) == ["messages.0.content.0.image.source.base64.data: Field required"]
    assert "does not appear to be a image/jpeg" in claude(image("image/jpeg"))[0]
    assert "Invalid base64" in claude(image(data="!!!"))[0]
    assert "image exceeds 5 MB maximum" in claude(image(data="A" * (5 * 1024 * 1024 + 4)))[0]
    assert "too many images and documents: 101 > 100" in claude(*[image()] * 101)[0]
    answer = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [image()]}]
    assert any(
        "only allowed in user messages" in p
        for p in validate_anthropic_request({"model": "m", "max_tokens": 1, "messages": answer})
    )


def openai(model: str, *parts: dict[str, Any], role: str = "user") -> list[str]:
    return validate_openai_request({"model": model, "messages": [{"role": role, "content": list(parts)}]})


def test_openai_checks_image_urls_files_and_vision() -> None:
    good = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert openai("gpt-4.1", good) == []
    assert (
        "Expected a base64-encoded data URL"
        in openai("gpt-4.1", {"type": "image_url", "image_url": {"url": f"data:image/bmp;base64,{PNG}"}})[0]
    )
    assert (
        "unsupported image"
        in openai("gpt-4.1", {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}})[0]
    )
    assert "only supported by certain models" in openai("gpt-3.5-turbo", good)[0]
    assert "Too many images" in openai("gpt-4.1", *[good] * 501)[-1]
    no_name = {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{b64(pdf_with_text())}"}}
    assert "file.filename" in openai("gpt-4.1", no_name)[0]
    not_pdf = {"type": "file", "file": {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PNG}"}}
    assert "Expected a base64 PDF" in openai("gpt-4.1", not_pdf)[0]


def test_gemini_checks_inline_data() -> None:
    def gemini(part: dict[str, Any]) -> list[str]:
        body = {"contents": [{"role": "user", "parts": [{"text": "see"}, part]}]}
        return validate_gemini_request(body, model="gemini-3.5-flash")

    assert gemini({"inlineData": {"mimeType": "image/png", "data": PNG}}) == []
    assert "Base64 decoding failed" in gemini({"inlineData": {"mimeType": "image/png", "data": "@@@"}})[0]
    assert "mime_type" in gemini({"inlineData": {"data": PNG}})[0]
    assert "Unsupported MIME type" in gemini({"inlineData": {"mimeType": "image/x-icon", "data": PNG}})[0]
    big = b64(b"\x89PNG\r\n\x1a\n" + b"0" * (20 * 1024 * 1024))
    assert "payload size exceeds" in gemini({"inlineData": {"mimeType": "image/png", "data": big}})[0]


def test_ollama_wants_bare_base64_images() -> None:
    def ollama(images: Any) -> list[str]:
        return validate_ollama_request(
            {"model": "llava", "messages": [{"role": "user", "content": "x", "images": images}]}
        )

    assert ollama([b64(jpeg())]) == []
    assert ollama([f"data:image/png;base64,{PNG}"]) == ["illegal base64 data at input byte 4"]
    assert ollama([b64(b"plain text")]) == ["image: unknown format"]


def test_cohere_takes_images_only_on_vision_models_and_at_most_20() -> None:
    good = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}

    def cohere(model: str, count: int) -> list[str]:
        body = {"model": model, "messages": [{"role": "user", "content": [good] * count}]}
        return validate_cohere_request(body)

    assert cohere("command-a-vision-07-2025", 20) == []
    assert "does not support image inputs" in cohere("command-a-03-2025", 1)[0]
    assert "too many images: 21" in cohere("command-a-vision-07-2025", 21)[0]
