"""Images and PDFs: their type by content (magic bytes, never the name), and media parts from a
message's blocks or a file's bytes. Downscaling is :mod:`.images`; a PDF's pages and text, :mod:`.pdf`.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from typing import Any

from colibri_router.conversation import PDF_TYPE, Media, MediaKind

# (signature, offset, media type); WebP is RIFF....WEBP.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"%PDF-", 0, PDF_TYPE),
)
SNIFF_BYTES = 16


def sniff(head: bytes) -> str | None:
    """The media type of content starting with ``head`` (png, jpeg, gif, webp, pdf), else None."""
    for signature, offset, media_type in _SIGNATURES:
        if head[offset : offset + len(signature)] == signature and (offset == 0 or head.startswith(b"RIFF")):
            return media_type
    return None


def kind_of(media_type: str) -> MediaKind:
    return "document" if media_type == PDF_TYPE else "image"


def sniff_base64(data: str) -> str | None:
    """The media type of base64 ``data``, from its first bytes; None when it is not valid base64."""
    try:
        head = base64.b64decode(data[: (SNIFF_BYTES // 3 + 1) * 4], validate=True)
    except (binascii.Error, ValueError):
        return None
    return sniff(head)


def media_of(kind: MediaKind, source: dict[str, Any], title: str | None = None) -> Media:
    """A block's ``source`` (Anthropic shape) as :class:`Media`; ValueError says what is wrong. The type
    of base64 content is read from its bytes, whatever ``media_type`` claims."""
    if source.get("type") == "url":
        url = source.get("url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise ValueError(f"an {kind} source of type url needs an http(s) `url`")
        declared = source.get("media_type")
        guessed = mimetypes.guess_type(url.split("?", 1)[0])[0]
        media_type = PDF_TYPE if kind == "document" else declared or guessed or "image/jpeg"
        return Media(kind, media_type if isinstance(media_type, str) else "image/jpeg", url=url, title=title)
    if source.get("type") != "base64":
        raise ValueError(f'an {kind} source is {{"type": "base64", "media_type", "data"}} or {{"type": "url", "url"}}')
    data = source.get("data")
    if not isinstance(data, str) or not data or len(data) % 4:
        raise ValueError(f"an {kind} source of type base64 needs its content, base64-encoded, in `data`")
    media_type = sniff_base64(data)
    expected = "a PDF" if kind == "document" else "a PNG, JPEG, GIF or WebP image"
    if media_type is None or kind_of(media_type) != kind:
        raise ValueError(f"the {kind}'s data is not {expected} (read from its first bytes)")
    return Media(kind, media_type, data, title=title)


def media_from_bytes(data: bytes, media_type: str, title: str | None = None) -> Media:
    return Media(kind_of(media_type), media_type, base64.b64encode(data).decode("ascii"), title=title)
