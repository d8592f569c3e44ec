"""Images and PDFs: their type by content (magic bytes, never the name), downscaling an image to a
wire's limits (Pillow, the optional ``colibri-router[images]`` extra), and a PDF's text for models
that cannot read PDFs (``pypdf``: pure Python, well kept, and text extraction is all that is needed;
no rendering, no native libraries to install).
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import mimetypes
from dataclasses import replace
from typing import Any

from colibri_router.conversation import PDF_TYPE, Media, MediaKind
from colibri_router.errors import InvalidRequestError

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
IMAGES_EXTRA = "colibri-router[images]"


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


def downscaled(media: Media, max_bytes: int, where: str) -> tuple[Media, str]:
    """``media`` re-encoded smaller than ``max_bytes``, keeping the aspect ratio; and the warning that
    says the new size. Without Pillow: INVALID_REQUEST naming the extra."""
    try:
        from PIL import Image
    except ImportError:
        raise InvalidRequestError(
            f"an image of {media.size} bytes is over {where}'s limit of {max_bytes} bytes; install "
            f"{IMAGES_EXTRA} to have it downscaled, or send a smaller image"
        ) from None
    raw = base64.b64decode(media.data or "")
    with Image.open(io.BytesIO(raw)) as image:
        width, height = image.size
        fmt = "PNG" if media.media_type == "image/png" else "JPEG"
        scale = math.sqrt(max_bytes / len(raw)) * 0.9
        while True:
            size = (max(1, int(width * scale)), max(1, int(height * scale)))
            buffer = io.BytesIO()
            resized = image.convert("RGB" if fmt == "JPEG" else image.mode).resize(size)
            resized.save(buffer, fmt, **({"quality": 85} if fmt == "JPEG" else {"optimize": True}))
            if buffer.tell() <= max_bytes or scale < 0.01:
                break
            scale *= 0.8
    media_type = "image/png" if fmt == "PNG" else "image/jpeg"
    smaller = replace(media, media_type=media_type, data=base64.b64encode(buffer.getvalue()).decode("ascii"))
    warning = (
        f"an image of {width}x{height} ({len(raw)} bytes) was over {where}'s limit of {max_bytes} bytes: "
        f"sent downscaled to {size[0]}x{size[1]} ({buffer.tell()} bytes)"
    )
    return smaller, warning


def pdf_pages(media: Media) -> int:
    """How many pages a PDF has (1 when it cannot be read: the provider will say what is wrong)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        return max(1, len(PdfReader(io.BytesIO(base64.b64decode(media.data or ""))).pages))
    except (PdfReadError, ValueError, OSError):
        return 1


def pdf_text(media: Media, where: str) -> str:
    """The text of a PDF, page by page; INVALID_REQUEST when it has none (pages that are only images)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    name = media.title or "a PDF"
    try:
        reader = PdfReader(io.BytesIO(base64.b64decode(media.data or "")))
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except (PdfReadError, ValueError, OSError) as error:
        raise InvalidRequestError(f"{name} could not be read as a PDF ({error})") from None
    if not any(pages):
        raise InvalidRequestError(
            f"{name} holds no text (its pages are images) and {where} cannot read PDFs; send it to a "
            "model that reads PDFs natively (Claude, Gemini, GPT-4o and later)"
        )
    body = "\n\n".join(f"[page {number}]\n{text}" for number, text in enumerate(pages, start=1) if text)
    return f'<document title="{name}">\n{body}\n</document>'
