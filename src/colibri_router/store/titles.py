"""A thread's title: what a person would recognise it by in a list."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

TITLE_LENGTH = 80


def thread_title(messages: Iterable[Mapping[str, Any]]) -> str:
    """The first text a user wrote, on one line (runs of whitespace become one space), cut to 80
    characters; ``""`` while no user message has text.

    A user message's content is a string or a list of blocks; its first non-blank ``text`` block
    counts (tool results, images and documents are not what a person typed)."""
    for message in messages:
        if message.get("role") != "user":
            continue
        for text in _texts(message.get("content")):
            line = " ".join(text.split())
            if line:
                return line[:TITLE_LENGTH]
    return ""


def _texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
                yield block["text"]
