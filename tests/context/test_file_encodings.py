"""Text files as they are (issue 32 §3): every encoding that can be known with confidence is decoded and
named in `files_read`, a UTF-8 byte-order mark is dropped, and lines are numbered as Python's universal
newlines split them (\\n, \\r\\n, a lone \\r); what cannot be decoded with confidence is left out, with a
warning."""

from __future__ import annotations

import codecs
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.context import gather
from colibri_router.context.encodings import Decoded, decode
from colibri_router.context.reading import numbered_block
from colibri_router.router.attachments import files_read_of
from colibri_router.settings import load_settings

FRENCH = "Le café était plein. « Quelle journée », pensa François.\nÀ demain, Zoë !\n"
QUOTES = "It\u2019s \u201cquoted\u201d \u2013 with an ellipsis\u2026 and \u20ac20.\n"
RUSSIAN = "Привет, мир! Это проверка кодировки. Мы пишем длинный текст на русском языке.\n"
JAPANESE = "日本語のテキストです。こんにちは世界。これは長い文章です。文字コードの判定を試します。\n"

BOMS = [
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    return tmp_path


def body_lines(block: str) -> list[str]:
    """The numbered lines of a file block, without their numbers."""
    return [row.split("│ ", 1)[1] for row in block.strip("\n").split("\n")[1:-1]]


@pytest.mark.parametrize(("mark", "codec"), BOMS)
def test_text_with_a_byte_order_mark_is_decoded_and_its_encoding_named(
    workspace: Path, mark: bytes, codec: str
) -> None:
    (workspace / "notes.txt").write_bytes(mark + FRENCH.encode(codec))
    reading = gather(["notes.txt"], load_settings())
    [part] = reading.parts
    assert body_lines(part.text) == FRENCH.splitlines()  # type: ignore[union-attr]
    [file] = reading.files
    assert (file.encoding, file.bytes) == (codec, len(mark) + len(FRENCH.encode(codec)))
    assert reading.warnings == []


def test_a_utf8_byte_order_mark_is_dropped_and_utf8_is_not_named(workspace: Path) -> None:
    (workspace / "app.py").write_bytes(codecs.BOM_UTF8 + b"x = 1\ny = 2\n")
    reading = gather(["app.py"], load_settings())
    assert reading.parts[0].text == '\n<file path="app.py">\n   1│ x = 1\n   2│ y = 2\n</file>\n'  # type: ignore[union-attr]
    assert reading.files[0].encoding is None


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        (FRENCH, "latin-1"),
        (FRENCH, "cp1252"),
        (QUOTES, "cp1252"),  # its curly quotes and dashes are not in Latin-1
        ("café\n", "latin-1"),  # a few bytes are enough for Windows-1252
        ("# Autor: José Núñez\nprint('olá')\n", "latin-1"),
    ],
)
def test_western_text_is_read_as_windows_1252(workspace: Path, text: str, codec: str) -> None:
    (workspace / "legacy.txt").write_bytes(text.encode(codec))
    reading = gather(["legacy.txt"], load_settings())
    assert body_lines(reading.parts[0].text) == text.splitlines()  # type: ignore[union-attr]
    assert reading.files[0].encoding == "cp1252"


@pytest.mark.parametrize(
    ("text", "codec"), [(RUSSIAN, "cp1251"), (RUSSIAN, "koi8_r"), (JAPANESE, "shift_jis"), (JAPANESE, "euc_jp")]
)
def test_other_legacy_encodings_are_read_when_the_detector_is_sure(workspace: Path, text: str, codec: str) -> None:
    (workspace / "legacy.txt").write_bytes(text.encode(codec))
    reading = gather(["legacy.txt"], load_settings())
    assert body_lines(reading.parts[0].text) == text.splitlines()  # type: ignore[union-attr]
    encoding = reading.files[0].encoding
    assert encoding is not None and text.encode(codec).decode(encoding) == text


def test_what_cannot_be_decoded_with_confidence_is_left_out_with_a_warning(workspace: Path) -> None:
    (workspace / "data").mkdir()
    (workspace / "data/short.txt").write_bytes("Привет\n".encode("koi8_r"))  # too short to be sure
    (workspace / "data/utf16.txt").write_bytes("no mark\n".encode("utf-16-le"))  # NULs, and no mark
    (workspace / "data/broken16.txt").write_bytes(codecs.BOM_UTF16_LE + b"\x00\xd8a")  # a lone surrogate
    (workspace / "data/ok.txt").write_text("fine\n", encoding="utf-8")
    reading = gather(["data"], load_settings())
    assert [f.path for f in reading.files] == ["data/ok.txt"]
    assert sorted(reading.warnings) == [
        "files: data/broken16.txt is binary: left out",
        "files: data/short.txt is in an encoding not recognised with confidence: left out",
        "files: data/utf16.txt is binary: left out",
    ]


def test_the_encoding_shows_in_files_read_only_when_not_utf8(workspace: Path) -> None:
    (workspace / "a.txt").write_bytes(codecs.BOM_UTF16_LE + "a\n".encode("utf-16-le"))
    (workspace / "b.txt").write_text("b\n", encoding="utf-8")
    shown = [entry.model_dump(mode="json") for entry in files_read_of(gather(["*.txt"], load_settings())) or []]
    assert [set(entry) for entry in shown] == [
        {"path", "bytes", "tokens_estimated", "encoding"},
        {"path", "bytes", "tokens_estimated"},
    ]
    assert shown[0]["encoding"] == "utf-16-le"


# -- line endings: as Python's universal newlines ---------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        (b"one\rtwo\rthree\r", ["one", "two", "three"]),  # old Mac
        (b"one\r\ntwo\r\n", ["one", "two"]),
        (b"one\ntwo\r\nthree\rfour", ["one", "two", "three", "four"]),
        (b"a\r\rb\n", ["a", "", "b"]),
        (b"form\x0cfeed\x0bvertical\xc2\x85next\xe2\x80\xa8sep\n", ["form\x0cfeed\x0bvertical\x85next\u2028sep"]),
    ],
)
def test_lines_are_numbered_as_universal_newlines_split_them(workspace: Path, content: bytes, lines: list[str]) -> None:
    (workspace / "f.txt").write_bytes(content)
    block = gather(["f.txt"], load_settings()).parts[0].text  # type: ignore[union-attr]
    assert body_lines(block) == lines
    assert [int(row.split("│")[0]) for row in block.strip("\n").split("\n")[1:-1]] == list(range(1, len(lines) + 1))


@given(st.text(alphabet=st.sampled_from(["a", "é", " ", "\r", "\n", "\x0b", "\x0c", "\x85", "\u2028", "\t"])))
def test_numbered_lines_match_python_universal_newlines(text: str) -> None:
    expected = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8", newline=None).read().split("\n")
    if expected[-1] == "":
        expected.pop()
    assert body_lines(numbered_block("f.txt", text)) == expected


# -- decode, whatever the bytes ---------------------------------------------------------------------------


@given(st.binary(max_size=600))
def test_any_bytes_decode_to_text_without_nul_or_to_nothing(data: bytes) -> None:
    decoded = decode(data)
    assert decoded is None or ("\0" not in decoded.text and isinstance(decoded.encoding, (str, type(None))))


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")))
def test_text_with_a_byte_order_mark_decodes_back_to_itself(text: str) -> None:
    for mark, codec in BOMS:
        assert decode(mark + text.encode(codec)) == Decoded(text, codec)
    assert decode(codecs.BOM_UTF8 + text.encode()) == Decoded(text, None)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")))
def test_utf8_text_decodes_back_to_itself_unnamed(text: str) -> None:
    data = text.encode()
    if not data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE)):
        assert decode(data) == Decoded(text, None)
