"""Small images and PDFs made on the spot for tests (Pillow and pypdf; nothing is downloaded): sound
ones, photos with an EXIF orientation, and broken ones (truncated, byte-flipped, encrypted, or using
what pypdf cannot decode)."""

from __future__ import annotations

import base64
import io

from PIL import Image


def png(width: int = 4, height: int = 3, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def jpeg(width: int = 4, height: int = 3) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(buffer, "JPEG")
    return buffer.getvalue()


def noisy_png(width: int, height: int) -> bytes:
    """A PNG that does not compress: random pixels, so its size follows its dimensions."""
    import os

    buffer = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(buffer, "PNG")
    return buffer.getvalue()


def pdf_with_text(text: str = "Hello PDF") -> bytes:
    """A one-page PDF whose page shows ``text`` (Helvetica), with a correct cross-reference table."""
    return pdf_with_content(text_stream(text))


def text_stream(text: str) -> bytes:
    return f"BT /F1 18 Tf 20 100 Td ({text}) Tj ET".encode()


def pdf_with_content(stream: bytes, stream_entries: bytes = b"") -> bytes:
    """A one-page PDF whose page's content stream is ``stream``, its dictionary holding
    ``stream_entries`` too (a ``/Filter``), with a correct cross-reference table."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d %s >>\nstream\n" % (len(stream), stream_entries) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % offset for offset in offsets)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def blank_pdf() -> bytes:
    """A PDF whose one page holds no text (as a scanned page would, to a text extractor)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def rewritten_pdf(data: bytes, *, compress: bool = False, user_password: str | None = None) -> bytes:
    """``data`` written again by pypdf's writer: its content streams compressed, or encrypted (AES-256)
    with ``user_password`` ("" opens without one; the owner password is always set)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    if compress:
        for page in writer.pages:
            page.compress_content_streams()
    if user_password is not None:
        writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-256")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def rich_pdf() -> bytes:
    """Three pages written by pypdf's writer, content streams compressed, with an outline, metadata
    and an annotation: more of what pypdf parses, for fuzzing."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.annotations import FreeText

    writer = PdfWriter()
    for text in ("Quarterly numbers", "Second page (with parens)", "Third"):
        writer.append(PdfReader(io.BytesIO(pdf_with_text(text))))
    writer.add_outline_item(title="Start", page_number=0)
    writer.add_metadata({"/Title": "Report"})
    writer.add_annotation(0, FreeText(text="note", rect=(10, 10, 100, 50)))
    for page in writer.pages:
        page.compress_content_streams()
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def pdf_bomb() -> bytes:
    """A PDF whose 77 kB content stream inflates past pypdf's 75 MB limit."""
    import zlib

    return pdf_with_content(zlib.compress(b" " * 76_000_000, 9), b"/Filter /FlateDecode")


# What pypdf cannot read in a page's content stream, as real PDFs hold it: its /Filter, its bytes, and
# the words of pypdf's error.
UNDECODABLE_FILTERS = (
    (b"/Filter /JBIG2Decode", text_stream("Hi"), "jbig2dec"),  # a decoder program that is not installed
    (b"/Filter /BrotliDecode", text_stream("Hi"), "brotli"),  # a package that is not installed
    (b"/Filter /FooDecode", text_stream("Hi"), "Unsupported filter"),  # NotImplementedError
    (b"/Filter /Fl", text_stream("Hi"), "deprecated"),  # an abbreviation pypdf 7 removed: DeprecationError
    (b"/Filter /LZWDecode", b"\x00\x01\x02garbage", "LZW code"),  # damaged compressed data
)


# EXIF orientation → how to store a picture so that a viewer applying the orientation shows it as
# it was drawn (the EXIF 2.3 table: 6 is shown turned 90° clockwise, so it is stored turned back).
STORED_AS = {
    1: None,
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,  # counter-clockwise
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}
QUADRANTS = ((255, 0, 0), (0, 200, 0), (0, 0, 255), (255, 255, 255))  # top-left, top-right, bottom-left, bottom-right


def photo(width: int, height: int, orientation: int, *, noise: bool = False) -> bytes:
    """A JPEG that shows ``width`` x ``height`` with four coloured quadrants once its EXIF
    ``orientation`` is applied (stored as a phone stores it); ``noise``: random pixels instead,
    so that it does not compress."""
    import os

    if noise:
        shown = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        shown = Image.new("RGB", (width, height))
        half_w, half_h = width // 2, height // 2
        boxes = ((0, 0, half_w, half_h), (half_w, 0, width, half_h), (0, half_h, half_w, height))
        for box, color in zip((*boxes, (half_w, half_h, width, height)), QUADRANTS, strict=True):
            shown.paste(color, box)
    method = STORED_AS[orientation]
    stored = shown if method is None else shown.transpose(method)
    exif = Image.Exif()
    exif[0x0112] = orientation
    buffer = io.BytesIO()
    stored.save(buffer, "JPEG", quality=95, exif=exif)
    return buffer.getvalue()


def image_in(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def webp(width: int = 8, height: int = 6) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (90, 20, 160)).save(buffer, "WEBP")
    return buffer.getvalue()


def gif(width: int = 8, height: int = 6) -> bytes:
    buffer = io.BytesIO()
    Image.new("P", (width, height), 3).save(buffer, "GIF")
    return buffer.getvalue()


def truncated(data: bytes, keep: float = 0.6) -> bytes:
    """``data`` missing its tail, as a copy cut short."""
    return data[: max(1, int(len(data) * keep))]


def flipped(data: bytes, positions: list[int], *, keep_head: int = 16) -> bytes:
    """``data`` with the bits of the bytes at ``positions`` (taken modulo its length, past its first
    ``keep_head`` bytes, so it is still recognised by its magic bytes) inverted."""
    out = bytearray(data)
    span = len(out) - keep_head
    for position in positions:
        out[keep_head + position % span] ^= 0xFF
    return bytes(out)


# Bytes of PDF syntax: an edit with one of them turns a number into a name, a dictionary into an
# array..., which is how pypdf's deeper errors are reached (TypeError, AttributeError, NotImplementedError).
PDF_SYNTAX = b"0123456789/[]<>()RE \n"


def edited(data: bytes, edits: list[tuple[int, int]], *, keep_head: int = 16) -> bytes:
    """``data`` with the byte at each ``position`` (modulo its length, past its first ``keep_head``
    bytes) replaced by ``value``."""
    out = bytearray(data)
    span = len(out) - keep_head
    for position, value in edits:
        out[keep_head + position % span] = value
    return bytes(out)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def image_block(data: bytes, media_type: str = "image/png") -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": b64(data)}}


def document_block(data: bytes) -> dict[str, object]:
    return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(data)}}
