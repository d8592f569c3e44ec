"""A text file's bytes as its text: decoded when its encoding is known with confidence, else not at all.

A byte-order mark says the encoding (UTF-32's marks are looked for before UTF-16's: UTF-32-LE's begins
with UTF-16-LE's), and is dropped. Otherwise the bytes are UTF-8, as most files are; or, when they
hold no NUL (binary files do, and so does UTF-16 without a mark, which is left out), a maintained
detector decides (charset-normalizer, which measures how much "mess" each candidate decoding makes).
It is asked about Windows-1252 first, the Western default that browsers use for "latin1" and
"iso-8859-1" too (on short texts its unrestricted ranking prefers look-alikes such as cp1250 and
cp852, which turn "naïve" into "naďve"); then about every encoding but BOM-less UTF-16 and UTF-32, and
trusted only when the file holds enough non-ASCII bytes for a detection to mean something.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

# (mark, codec); UTF-32-LE before UTF-16-LE, whose mark is its prefix.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
WESTERN = "cp1252"
# On fewer non-ASCII bytes than this the detector's unrestricted answer is a coin toss between
# single-byte code pages (measured: 10-byte Russian or Greek texts come back as cp1125 or johab).
MIN_DETECTED_BYTES = 32
_WITHOUT_MARK = ["utf_16", "utf_16_be", "utf_16_le", "utf_32", "utf_32_be", "utf_32_le"]
_ASCII = bytes(range(128))


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str | None  # None: UTF-8 (a UTF-8 byte-order mark is dropped, not reported)


def decode(data: bytes) -> Decoded | None:
    """``data`` as text, with the encoding it was in; None when it is binary or its encoding is not
    known with confidence."""
    for mark, codec in _BOMS:
        if data.startswith(mark):
            try:
                text = data[len(mark) :].decode(codec)
            except UnicodeDecodeError:
                return None
            return None if "\0" in text else Decoded(text, None if codec == "utf-8" else codec)
    if b"\0" in data:
        return None
    try:
        return Decoded(data.decode("utf-8"), None)
    except UnicodeDecodeError:
        return _detected(data)


def _detected(data: bytes) -> Decoded | None:
    from charset_normalizer import from_bytes

    if from_bytes(data, cp_isolation=[WESTERN], enable_fallback=False).best() is not None:
        return Decoded(data.decode(WESTERN), WESTERN)
    if len(data.translate(None, _ASCII)) < MIN_DETECTED_BYTES:  # what is left is the non-ASCII bytes
        return None
    best = from_bytes(data, cp_exclusion=_WITHOUT_MARK, enable_fallback=False).best()
    if best is None:
        return None
    try:
        return Decoded(data.decode(best.encoding), codecs.lookup(best.encoding).name)
    except (UnicodeDecodeError, LookupError):
        return None
