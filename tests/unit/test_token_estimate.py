"""The one estimate of a request's input tokens: text at 3 characters a token (it errs high), every
part of the prompt counted, images and PDFs at what a provider charges, never at their base64."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from colibri_router.context import estimate_tokens
from colibri_router.conversation import (
    CompletionRequest,
    Media,
    Message,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from colibri_router.token_estimate import IMAGE_TOKENS, PDF_PAGE_TOKENS, media_tokens, request_tokens

BASE = (Message("user", (Text("x" * 30),)),)


def request(*messages: Message, **fields: Any) -> CompletionRequest:
    return CompletionRequest(model="m", messages=messages or BASE, max_tokens=10, **fields)


@given(
    system=st.text(max_size=300),
    turns=st.lists(st.lists(st.text(max_size=300), min_size=1, max_size=4), min_size=1, max_size=4),
)
def test_text_counts_at_three_characters_a_token_and_never_below_a_readers_estimate(
    system: str, turns: list[list[str]]
) -> None:
    messages = tuple(
        Message("user" if i % 2 == 0 else "assistant", tuple(Text(t) for t in texts)) for i, texts in enumerate(turns)
    )
    estimate = request_tokens(request(*messages, system=system or None))
    everything = system + "".join(t for texts in turns for t in texts)
    assert estimate == math.ceil(len(everything) / 3)
    assert estimate >= estimate_tokens(everything)  # the figure a reader sees for a file (4 a token)


def test_every_part_of_the_prompt_counts() -> None:
    base = request_tokens(request())
    arguments = {"path": "src/app.py", "lines": [1, 2]}
    grown = request(
        *BASE,
        Message("assistant", (Thinking("t" * 30), ToolCall("c1", "read_file", arguments))),
        Message("user", (ToolResult("c1", "r" * 30),)),
    )
    calls = len("read_file") + len(json.dumps(arguments))
    assert request_tokens(grown) == math.ceil((30 + 30 + calls + 30) / 3)
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = (ToolSpec("read_file", schema, "Read a file"),)
    with_tools = request_tokens(request(tools=tools))
    assert with_tools == math.ceil((30 + len("read_file") + len("Read a file") + len(json.dumps(schema))) / 3)
    assert with_tools > base


@given(megabytes=st.integers(min_value=0, max_value=8), pages=st.integers(min_value=1, max_value=40))
def test_media_counts_as_a_provider_charges_not_as_its_base64(megabytes: int, pages: int) -> None:
    image = Media("image", "image/png", "A" * (megabytes * 1_000_000 + 4))
    pdf = Media("document", "application/pdf", "A" * (pages * 50_000 * 4 // 3 + 4))
    assert media_tokens(image) == IMAGE_TOKENS
    assert media_tokens(pdf) == PDF_PAGE_TOKENS * pages
    shown = request(Message("user", (Text("x" * 30), image, ToolResult("c", "", media=(image, pdf)))))
    assert request_tokens(shown) == 10 + 2 * IMAGE_TOKENS + PDF_PAGE_TOKENS * pages
