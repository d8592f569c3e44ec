"""The one estimate of a request's input tokens, made before anything is sent.

Three places need it, and all three want a figure that errs high: the worst case a call reserves in
the budgets and holds against ``max_cost_usd`` (too low and a call spends past them), the context
limit a call with files must fit (too low and the provider refuses what was sent), and the window
asked of Ollama (too small and Ollama silently cuts the prompt). So text counts at 3 characters a
token, where real text averages about 4; an image or a PDF counts as what a provider charges for it,
never as its base64.

The ``tokens_estimated`` of each file in a result's ``files_read`` is a different figure: a reader's
typical size of one file (:mod:`colibri_router.context.reading`, 4 characters a token).
"""

from __future__ import annotations

import json
import math

from colibri_router.conversation import CompletionRequest, Media, Text, Thinking, ToolCall, ToolResult

CHARS_PER_TOKEN = 3  # errs high: real text averages about 4 characters a token
IMAGE_TOKENS = 1_600
PDF_PAGE_TOKENS = 2_000
PDF_BYTES_PER_PAGE = 50_000


def request_tokens(request: CompletionRequest) -> int:
    """The request's input tokens, estimated high: its system prompt, every part of every turn (text,
    reasoning, tool calls with their arguments, tool results) and its tool definitions, by their
    characters; images and PDFs by :func:`media_tokens`."""
    chars = len(request.system or "")
    media = 0
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, Text | Thinking):
                chars += len(part.text)
            elif isinstance(part, ToolCall):
                chars += len(part.name) + len(json.dumps(part.arguments, ensure_ascii=False))
            elif isinstance(part, ToolResult):
                chars += len(part.content)
                media += sum(media_tokens(item) for item in part.media)
            elif isinstance(part, Media):
                media += media_tokens(part)
    for tool in request.tools:
        schema = json.dumps(dict(tool.input_schema), ensure_ascii=False)
        chars += len(tool.name) + len(tool.description or "") + len(schema)
    return math.ceil(chars / CHARS_PER_TOKEN) + media


def media_tokens(media: Media) -> int:
    """What an image or a PDF costs in tokens, estimated without opening it: an image at most about
    1,600; a PDF about 2,000 a page, pages guessed at one per 50 kB (text PDFs are smaller, scans larger)."""
    if media.kind == "image":
        return IMAGE_TOKENS
    return PDF_PAGE_TOKENS * max(1, media.size // PDF_BYTES_PER_PAGE)
