"""Which models read images and PDFs, and each wire's limits on them: data, with a source per fact.

A model's media support is part of its profile (chosen by the model's name, on any provider that
serves it). ``None`` means unknown: images are then sent and the provider decides (with a warning),
and a PDF goes as its text. The router checks all of it before anything is sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from colibri_router.providers.spec import WireName


@dataclass(frozen=True, slots=True)
class MediaSupport:
    images: bool | None = None
    pdf: bool | None = None  # native PDF input; otherwise the router sends the PDF's text
    source: str = ""


UNKNOWN = MediaSupport()
_OPENAI_DOCS = "OpenAI docs: Images and vision; File inputs (chat completions take PDFs on vision models)"
# First full match (case-insensitive) of the model name's last segment wins.
_TABLE: tuple[tuple[str, MediaSupport], ...] = (
    (r"claude-.*", MediaSupport(True, True, "Anthropic docs: Vision; PDF support (every current Claude model)")),
    (r"gemini-.*", MediaSupport(True, True, "Gemini API docs: Image understanding; Document understanding")),
    (r"(?:gpt-3\.5|o1-mini|o3-mini|gpt-4-(?:0314|0613)|gpt-4(?=$)).*", MediaSupport(False, False, _OPENAI_DOCS)),
    (r"(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4-mini).*", MediaSupport(True, True, _OPENAI_DOCS)),
    (
        r"(?:moonshot(?:ai)?\.)?kimi[-_.]?k(?:2[-_.p]?[5-9](?![0-9])|[3-9]).*|moonshot-v1-.*-vision.*",
        MediaSupport(True, False, "Moonshot docs: Kimi K2.5 and the moonshot-v1 vision models read images"),
    ),
    (
        r"(?:moonshot(?:ai)?\.)?(?:kimi[-_.]?k\d|kimi-latest|kimi-thinking-preview|k2[-_.]thinking).*|moonshot-v1-.*",
        MediaSupport(False, False, "Moonshot docs: Kimi K2 (before K2.5) and moonshot-v1 text models are text-only"),
    ),
    (
        r"pixtral-.*|mistral-(?:small|medium|large)-(?:latest|2503|2505|2506|2508|2512).*|ministral-(?:3|8|14)b-2512",
        MediaSupport(True, False, "Mistral docs: Vision (models with vision capabilities)"),
    ),
    (r"(?:codestral|devstral|open-mistral|open-mixtral)-.*", MediaSupport(False, False, "Mistral docs: models")),
    (r"command-a-vision-.*|c4ai-aya-vision-.*", MediaSupport(True, False, "Cohere docs: Command A Vision")),
    (r"command-.*|c4ai-aya-.*", MediaSupport(False, False, "Cohere docs: Image inputs (only vision models)")),
    (r"deepseek-.*", MediaSupport(False, False, "DeepSeek API docs: chat takes text only")),
    (r"(?:meta-llama/)?llama-4-.*|llama-3\.2-.*vision.*", MediaSupport(True, False, "Meta: Llama 4 and 3.2 Vision")),
    (r"llama-3.*", MediaSupport(False, False, "Meta: Llama 3 text models")),
    (
        r"(?:llava|bakllava|moondream|minicpm-v|gemma3|qwen2\.5vl|qwen3-vl|llama3\.2-vision|granite3\.2-vision).*",
        MediaSupport(True, False, "Ollama library: vision models"),
    ),
)
_COMPILED = tuple((re.compile(pattern, re.IGNORECASE), support) for pattern, support in _TABLE)


def media_support(segment: str) -> MediaSupport:
    """What the model named ``segment`` (a name's last path segment) reads."""
    return next((support for pattern, support in _COMPILED if pattern.fullmatch(segment)), UNKNOWN)


@dataclass(frozen=True, slots=True)
class WireMediaLimits:
    """What one wire's reference service accepts; None: no documented limit."""

    max_image_bytes: int | None = None
    max_images: int | None = None
    url_images: bool = True
    url_documents: bool = False
    source: str = ""
    max_pdf_pages: int | None = None


WIRE_MEDIA_LIMITS: dict[WireName, WireMediaLimits] = {
    # 5 MB of base64 per image, so 3.75 MB of image; 100 images a request.
    "anthropic": WireMediaLimits(
        5 * 1024 * 1024 * 3 // 4, 100, True, True, "Anthropic docs: Vision; PDF support (100 pages)", 100
    ),
    "openai": WireMediaLimits(20 * 1024 * 1024, 500, True, False, "OpenAI docs: Images and vision (input limits)"),
    # Inline data counts toward the request's 20 MB.
    "gemini": WireMediaLimits(
        15 * 1024 * 1024, 3000, True, True, "Gemini API docs: Image and Document understanding (1,000 pages)", 1000
    ),
    "cohere": WireMediaLimits(20 * 1024 * 1024, 20, True, False, "Cohere docs: Command A Vision (20 images)"),
    "ollama": WireMediaLimits(None, None, False, False, "Ollama API docs: images are base64"),
}
