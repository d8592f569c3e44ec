"""Reading the files ``files`` named: limits, secrets, binary files, encodings, redaction, line numbers.

Each text file becomes one text part headed by its path, every line numbered (``  12│ code``) so the
model can cite lines; lines end as Python's universal newlines say (``\n``, ``\r\n`` or a lone ``\r``).
Text is decoded as :mod:`.encodings` says. Everything that would make the call fail is found here,
before anything is sent; a file that cannot be read is INVALID_REQUEST when named, and left out with a
warning when a glob or directory found it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from colibri_router.context.encodings import decode
from colibri_router.context.paths import Found
from colibri_router.context.secrets import refusal
from colibri_router.conversation import Media, Part, Text, anthropic_blocks
from colibri_router.errors import InvalidRequestError
from colibri_router.media.kinds import SNIFF_BYTES, media_from_bytes, sniff
from colibri_router.media.pdf import PdfUnreadable, pdf_pages
from colibri_router.redaction import scan
from colibri_router.token_estimate import IMAGE_TOKENS, PDF_PAGE_TOKENS, media_tokens

# Tokens are estimated, never counted (each provider has its own tokenizer): code and prose average
# about four characters a token; an image costs up to about 1,600 (Anthropic's figure for the largest
# image it does not shrink), a PDF page about 1,500 to 3,000 (its text and an image of it). A file's
# ``tokens_estimated`` (in ``files_read``) is that typical figure for a reader; what a request is
# sized and priced by errs high instead (colibri_router.token_estimate, 3 characters a token).
CHARS_PER_TOKEN = 4
# Anthropic's whole request may be 32 MB: no wire takes a larger image or PDF.
MAX_MEDIA_BYTES = 32 * 1024 * 1024
MIN_NUMBER_WIDTH = 4


@dataclass(frozen=True, slots=True)
class FileRead:
    """What the result reports of one file sent."""

    path: str
    bytes: int
    tokens_estimated: int
    encoding: str | None = None  # a text file's, when not UTF-8


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

    def blocks(self) -> list[dict[str, Any]]:
        """The parts as host-facing blocks (Anthropic's shape). An image's block keeps its file's name
        as ``title``, which the input reads back (a document's block has one anyway), so that what is
        said of an image later (it could not be downscaled) names its file; no wire sends it."""
        blocks = anthropic_blocks(self.parts)
        for part, block in zip(self.parts, blocks, strict=True):
            if isinstance(part, Media) and part.kind == "image" and part.title:
                block["title"] = part.title
        return blocks


def read_all(found: list[Found], limits: Limits) -> Reading:
    reading = Reading([], [], [])
    for file in found:
        reason = refusal(file.path, file.shown, limits.allow, limits.max_bytes)
        if reason is not None:
            if file.explicit:
                raise InvalidRequestError(
                    f"files: {file.shown!r} {reason} and is not sent; name it in COLIBRI_FILES_ALLOW to allow it"
                )
            reading.warnings.append(f"files: {file.shown} {reason}: left out")
            continue
        _read_one(file, limits, reading)
    return reading


def _read_one(file: Found, limits: Limits, reading: Reading) -> None:
    try:
        _read_file(file, limits, reading)
    except OSError as error:  # gone since it was listed, unreadable, a directory by now...
        why = error.strerror or type(error).__name__
        if file.explicit:
            raise InvalidRequestError(f"files: {file.shown!r} could not be read ({why})") from None
        reading.warnings.append(f"files: {file.shown} could not be read ({why}): left out")


def _read_file(file: Found, limits: Limits, reading: Reading) -> None:
    size = file.path.stat().st_size
    with file.path.open("rb") as opened:
        media_type = sniff(opened.read(SNIFF_BYTES))
    if media_type is not None:
        _read_media(file, size, media_type, reading)
        return
    if size > limits.max_bytes:
        if not file.explicit:  # one large file does not fail a whole glob or directory
            reading.warnings.append(f"files: {file.shown} is over COLIBRI_FILE_MAX_BYTES ({size} bytes): left out")
            return
        raise InvalidRequestError(
            f"files: {file.shown!r} is {size} bytes, over the limit of {limits.max_bytes} (COLIBRI_FILE_MAX_BYTES)"
        )
    data = file.path.read_bytes()
    decoded = decode(data)
    if decoded is None:
        what = "binary" if b"\0" in data else "in an encoding not recognised with confidence"
        reading.warnings.append(f"files: {file.shown} is {what}: left out")
        return
    redacted = scan(decoded.text, file.path.name)
    if redacted.kinds:
        found = ", ".join(redacted.kinds)
        reading.warnings.append(f"files: {file.shown} holds key-shaped text ({found}), sent as [redacted]")
    block = numbered_block(file.shown, redacted.text)
    reading.parts.append(Text(block))
    reading.files.append(FileRead(file.shown, size, estimate_tokens(block), decoded.encoding))


def _read_media(file: Found, size: int, media_type: str, reading: Reading) -> None:
    """An image or PDF becomes a media part of the turn, by its content; each wire sends it natively
    or the router adapts it to the model (downscaled, or a PDF's text)."""
    if size > MAX_MEDIA_BYTES:
        if not file.explicit:
            reading.warnings.append(f"files: {file.shown} is over {MAX_MEDIA_BYTES} bytes: left out")
            return
        raise InvalidRequestError(
            f"files: {file.shown!r} is {size} bytes, over the limit of {MAX_MEDIA_BYTES} for an image or PDF"
        )
    media = media_from_bytes(file.path.read_bytes(), media_type, title=file.path.name)
    reading.parts.append(media)
    reading.files.append(FileRead(file.shown, size, _media_tokens_read(media)))


def _media_tokens_read(media: Media) -> int:
    """An image's or a PDF's tokens, a PDF's from its pages when it can be read here (the models it
    goes to say what is wrong with one that cannot: see :mod:`colibri_router.router.fit`)."""
    if media.kind == "image":
        return IMAGE_TOKENS
    try:
        return PDF_PAGE_TOKENS * max(1, pdf_pages(media))
    except PdfUnreadable:
        return media_tokens(media)


def numbered_block(shown: str, text: str) -> str:
    """``text`` as one block headed by its path, each line numbered from 1; it starts and ends with a
    newline, so wires that join a turn's text parts keep it on lines of its own."""
    # Universal newlines: \r\n, then a lone \r, end a line as \n does (not \v, \f, \x85 or \u2028,
    # as str.splitlines would); most files hold no \r, and skip the copies.
    lines = (text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line of its own
    width = max(MIN_NUMBER_WIDTH, len(str(len(lines))))
    body = "\n".join(f"{number:>{width}}│ {line}" for number, line in enumerate(lines, start=1))
    return f'\n<file path="{shown}">\n{body}\n</file>\n' if body else f'\n<file path="{shown}">\n</file>\n'


def estimate_tokens(text: str) -> int:
    return estimate_tokens_of(len(text))


def estimate_tokens_of(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)
