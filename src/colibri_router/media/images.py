"""An image downscaled to a wire's size limit (Pillow, the optional ``colibri-router[images]`` extra).

A photo is turned upright first, as its EXIF orientation says (phones store a portrait photo as a
landscape frame with orientation 6), since the copy sent carries no EXIF: it is sent as it is seen,
and the warning gives the size as seen. The bytes are untrusted: an image Pillow cannot decode
(truncated, damaged, a decompression bomb) is refused naming it, never an internal error.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import replace
from typing import TYPE_CHECKING

from colibri_router.conversation import Media
from colibri_router.errors import InvalidRequestError
from colibri_router.media.pdf import reason

if TYPE_CHECKING:
    from PIL.Image import Image

IMAGES_EXTRA = "colibri-router[images]"
JPEG_QUALITY = 85
SMALLEST_SCALE = 0.01


class ImageUnreadable(Exception):
    """An image too large for the wire that could not be decoded to make it smaller; ``str()`` says so."""


def downscaled(media: Media, max_bytes: int, where: str) -> tuple[Media, str]:
    """``media`` upright and re-encoded smaller than ``max_bytes``, keeping the aspect ratio; and the
    warning that says the new size. Without Pillow: INVALID_REQUEST naming the extra; an image that
    cannot be decoded: :class:`ImageUnreadable`."""
    label = media.title or "an image"
    try:
        from PIL import Image, ImageOps
    except ImportError:
        raise InvalidRequestError(
            f"{label} of {media.size} bytes is over {where}'s limit of {max_bytes} bytes; install "
            f"{IMAGES_EXTRA} to have it downscaled, or send a smaller image"
        ) from None
    fmt = "PNG" if media.media_type == "image/png" else "JPEG"
    raw = b""
    try:
        raw = base64.b64decode(media.data or "")
        with Image.open(io.BytesIO(raw)) as opened:
            upright = ImageOps.exif_transpose(opened)
        width, height = upright.size
        encoded, size = _smaller(upright, fmt, math.sqrt(max_bytes / len(raw)) * 0.9, max_bytes)
    except Exception as error:  # untrusted bytes: Pillow raises OSError, SyntaxError, ValueError, ...
        raise ImageUnreadable(
            f"{label} ({len(raw) or media.size} bytes) is over {where}'s limit of {max_bytes} bytes and could "
            f"not be decoded to downscale it ({reason(error)}); send a smaller or repaired image"
        ) from None
    media_type = "image/png" if fmt == "PNG" else "image/jpeg"
    smaller = replace(media, media_type=media_type, data=base64.b64encode(encoded).decode("ascii"))
    warning = (
        f"{label} ({width}x{height}, {len(raw)} bytes) was over {where}'s limit of {max_bytes} bytes: "
        f"sent downscaled to {size[0]}x{size[1]} ({len(encoded)} bytes)"
    )
    return smaller, warning


def _smaller(image: Image, fmt: str, scale: float, max_bytes: int) -> tuple[bytes, tuple[int, int]]:
    """``image`` encoded in ``fmt`` at ``scale``, shrunk further until it fits ``max_bytes``."""
    width, height = image.size
    converted = image.convert("RGB" if fmt == "JPEG" else image.mode)
    while True:
        size = (max(1, int(width * scale)), max(1, int(height * scale)))
        buffer = io.BytesIO()
        options = {"quality": JPEG_QUALITY} if fmt == "JPEG" else {"optimize": True}
        converted.resize(size).save(buffer, fmt, **options)
        if buffer.tell() <= max_bytes or scale < SMALLEST_SCALE:
            return buffer.getvalue(), size
        scale *= 0.8
