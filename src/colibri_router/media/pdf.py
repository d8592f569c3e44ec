"""PDFs read locally with ``pypdf`` (pure Python, well kept; text extraction is all that is needed, no
rendering, no native libraries): a PDF's page count, for the wires that limit pages, and its text, for
models that read no PDFs.

A PDF comes from the user's disk or a message, so its bytes are untrusted: pypdf may raise anything
on them (its own errors, a limit reached, a decoder or a dependency it lacks, and ``TypeError`` or
``AttributeError`` deep inside on damaged bytes). Every one becomes :class:`PdfUnreadable`, saying why
in a few words; a PDF that opens only with a password is :class:`PdfEncrypted`.
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

from colibri_router.conversation import Media

if TYPE_CHECKING:
    from pypdf import PdfReader

REASON_CHARS = 160


class PdfUnreadable(Exception):
    """The PDF could not be read here; ``str()`` says why, in a few words."""


class PdfEncrypted(PdfUnreadable):
    """The PDF is encrypted with a password that is not empty: no one can read it without it."""


def reason(error: BaseException) -> str:
    """``error`` as a short phrase for a message: its text on one line, cut to a readable length."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def _reader(media: Media) -> PdfReader:
    from pypdf import PasswordType, PdfReader

    raw = b""
    try:
        raw = base64.b64decode(media.data or "")
        reader = PdfReader(io.BytesIO(raw))
        # pypdf tries the empty password on opening; an owner-only password leaves the text readable.
        locked = reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED
    except Exception as error:  # untrusted bytes: any failure means "cannot be read here"
        # An encryption dictionary in the trailer: decrypting failed (AES without a crypto package...).
        raise PdfUnreadable(_why(error, encrypted=b"/Encrypt" in raw)) from None
    if locked:
        raise PdfEncrypted("it is encrypted: it opens only with its password")
    return reader


def _why(error: BaseException, *, encrypted: bool) -> str:
    prefix = "it is encrypted and could not be decrypted here" if encrypted else "it is damaged or unsupported"
    return f"{prefix}: {reason(error)}"


def pdf_pages(media: Media) -> int:
    """How many pages the PDF has; :class:`PdfUnreadable` when it cannot be read."""
    reader = _reader(media)
    try:
        return len(reader.pages)
    except Exception as error:  # a damaged page tree
        raise PdfUnreadable(_why(error, encrypted=False)) from None


def pdf_text(media: Media) -> list[str]:
    """The text of each page, stripped ("" for a page without text, as a scan's); :class:`PdfUnreadable`
    naming the page whose text could not be extracted."""
    reader = _reader(media)
    try:
        pages = reader.pages
        count = len(pages)
    except Exception as error:
        raise PdfUnreadable(_why(error, encrypted=False)) from None
    texts = []
    for number in range(count):
        try:
            texts.append((pages[number].extract_text() or "").strip())
        except Exception as error:
            raise PdfUnreadable(f"the text of page {number + 1} could not be extracted: {reason(error)}") from None
    return texts


def document_text(name: str, pages: list[str]) -> str:
    """A PDF's page texts as one block a model reads, each page headed by its number."""
    body = "\n\n".join(f"[page {number}]\n{text}" for number, text in enumerate(pages, start=1) if text)
    return f'<document title="{name}">\n{body}\n</document>'
