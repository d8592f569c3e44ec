"""Reading the files ``files`` named: limits, secrets, binary files, redaction, line numbers.

Each text file becomes one text part headed by its path, every line numbered (``  12│ code``) so the
model can cite lines. Everything that would make the call fail is found here, before anything is sent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from colibri_router.context.media import SNIFF_BYTES, media_from_bytes, pdf_pages, sniff
from colibri_router.context.paths import Found
from colibri_router.context.secrets import allowed, looks_secret
from colibri_router.conversation import Media, Part, Text
from colibri_router.errors import InvalidRequestError
from colibri_router.redaction import scan

# Tokens are estimated, never counted (each provider has its own tokenizer): code and prose average
# about four characters a token; an image costs up to about 1,600 (Anthropic's figure for the largest
# image it does not shrink), a PDF page about 1,500 to 3,000 (its text and an image of it).
CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
PDF_PAGE_TOKENS = 2_000
PDF_BYTES_PER_PAGE = 50_000
# Anthropic's whole request may be 32 MB: no wire takes a larger image or PDF.
MAX_MEDIA_BYTES = 32 * 1024 * 1024
MIN_NUMBER_WIDTH = 4


@dataclass(frozen=True, slots=True)
class FileRead:
    """What the result reports of one file sent."""

    path: str
    bytes: int
    tokens_estimated: int


@dataclass(frozen=True, slots=True)
class Limits:
    max_bytes: int
    allow: tuple[str, ...] = ()


@dataclass(slots=True)
class Reading:
    """What the files add to the last user turn, and what the result says about them."""

    parts: list[Part]
    files: list[FileRead]
    warnings: list[str]

    @property
    def tokens(self) -> int:
        return sum(file.tokens_estimated for file in self.files)


def read_all(found: list[Found], limits: Limits) -> Reading:
    reading = Reading([], [], [])
    for file in found:
        if looks_secret(file.path) and not allowed(file.path, file.shown, list(limits.allow)):
            if file.explicit:
                raise InvalidRequestError(
                    f"files: {file.shown!r} looks like a secret (.env*, *.pem, *.key, id_rsa*, *credentials*) "
                    "and is not sent; name it in COLIBRI_FILES_ALLOW to allow it"
                )
            reading.warnings.append(f"files: {file.shown} looks like a secret: left out")
            continue
        _read_one(file, limits, reading)
    return reading


def _read_one(file: Found, limits: Limits, reading: Reading) -> None:
    size = file.path.stat().st_size
    with file.path.open("rb") as opened:
        media_type = sniff(opened.read(SNIFF_BYTES))
    if media_type is not None:
        _read_media(file, size, media_type, reading)
        return
    if size > limits.max_bytes:
        raise InvalidRequestError(
            f"files: {file.shown!r} is {size} bytes, over the limit of {limits.max_bytes} (COLIBRI_FILE_MAX_BYTES)"
        )
    data = file.path.read_bytes()
    text = _text_of(data)
    if text is None:
        reading.warnings.append(f"files: {file.shown} is binary: left out")
        return
    redacted = scan(text, file.path.name)
    if redacted.kinds:
        found = ", ".join(redacted.kinds)
        reading.warnings.append(f"files: {file.shown} holds key-shaped text ({found}), sent as [redacted]")
    block = numbered_block(file.shown, redacted.text)
    reading.parts.append(Text(block))
    reading.files.append(FileRead(file.shown, size, estimate_tokens(block)))


def _read_media(file: Found, size: int, media_type: str, reading: Reading) -> None:
    """An image or PDF becomes a media part of the turn, by its content; each wire sends it natively
    or the router adapts it to the model (downscaled, or a PDF's text)."""
    if size > MAX_MEDIA_BYTES:
        raise InvalidRequestError(
            f"files: {file.shown!r} is {size} bytes, over the limit of {MAX_MEDIA_BYTES} for an image or PDF"
        )
    media = media_from_bytes(file.path.read_bytes(), media_type, title=file.path.name)
    reading.parts.append(media)
    tokens = IMAGE_TOKENS if media.kind == "image" else PDF_PAGE_TOKENS * pdf_pages(media)
    reading.files.append(FileRead(file.shown, size, tokens))


def _text_of(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def numbered_block(shown: str, text: str) -> str:
    """``text`` as one block headed by its path, each line numbered from 1; it starts and ends with a
    newline, so wires that join a turn's text parts keep it on lines of its own."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line of its own
    width = max(MIN_NUMBER_WIDTH, len(str(len(lines))))
    body = "\n".join(f"{number:>{width}}│ {line}" for number, line in enumerate(lines, start=1))
    return f'\n<file path="{shown}">\n{body}\n</file>\n' if body else f'\n<file path="{shown}">\n</file>\n'


def media_tokens(media: Media) -> int:
    """What an image or a PDF costs in tokens, estimated without opening it: an image at most about
    1,600; a PDF about 2,000 a page, pages guessed at one per 50 kB (text PDFs are smaller, scans larger)."""
    if media.kind == "image":
        return IMAGE_TOKENS
    return PDF_PAGE_TOKENS * max(1, media.size // PDF_BYTES_PER_PAGE)


def estimate_tokens(text: str) -> int:
    return estimate_tokens_of(len(text))


def estimate_tokens_of(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)
