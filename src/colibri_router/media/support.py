"""Which models read images and PDFs: data, with a source per fact (each wire's limits on them are in
its record, :mod:`colibri_router.providers.wires`).

A model's media support is part of its profile (chosen by the model's name, on any provider that
serves it). ``None`` means unknown: images are then sent and the provider decides (with a warning),
and a PDF goes as its text. The router checks all of it before anything is sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


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
