"""Images and documents in stored threads: kept once per thread by content hash, not once per turn.

Before turns are stored, each base64 ``image``/``document`` source (in a user turn or inside a
``tool_result``) is replaced by ``{"type": "stored", "media_type", "sha256"}`` and its data goes to
the thread's media table, once per hash; loading puts the data back. Pure functions: both backends
use them around their own SQL.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

STORED = "stored"
_MEDIA = ("image", "document")


def deflate(messages: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``messages`` with every base64 media source replaced by its hash, and hash → data."""
    blobs: dict[str, str] = {}
    out = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list) or not any(_holds_media(block) for block in content):
            out.append(dict(message))
            continue
        out.append({**message, "content": [_deflated(block, blobs) for block in content]})
    return out, blobs


def inflate(messages: list[dict[str, Any]], blobs: Mapping[str, str]) -> list[dict[str, Any]]:
    """Stored messages with their media data back (a missing blob leaves the reference)."""
    for block in _media_blocks(messages):
        source = block["source"]
        if source.get("type") == STORED and source.get("sha256") in blobs:
            block["source"] = {"type": "base64", "media_type": source["media_type"], "data": blobs[source["sha256"]]}
    return messages


def referenced(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any message refers to stored media (most threads hold none: no media query then)."""
    return any(block["source"].get("type") == STORED for block in _media_blocks(messages))


def _holds_media(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    inner = block.get("content") if block.get("type") == "tool_result" else None
    return block.get("type") in _MEDIA or (isinstance(inner, list) and any(_holds_media(item) for item in inner))


def _deflated(block: Any, blobs: dict[str, str]) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        return {**block, "content": [_deflated(item, blobs) for item in block["content"]]}
    source = block.get("source")
    if block.get("type") not in _MEDIA or not isinstance(source, dict) or source.get("type") != "base64":
        return block
    data = source.get("data")
    if not isinstance(data, str):
        return block
    digest = hashlib.sha256(data.encode("ascii", "replace")).hexdigest()
    blobs[digest] = data
    return {**block, "source": {"type": STORED, "media_type": source.get("media_type"), "sha256": digest}}


def _media_blocks(messages: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for item in [block, *(inner if isinstance(inner, list) else ())]:
                if isinstance(item, dict) and item.get("type") in _MEDIA and isinstance(item.get("source"), dict):
                    yield item
