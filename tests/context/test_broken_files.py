"""Nothing a file holds may crash a call (issue 32 §1), and photos keep their orientation (§2).

PDFs and images made in the tests with pypdf and Pillow, sound, broken in the ways real files are
(truncated, byte-flipped, encrypted, using a decoder pypdf lacks, a decompression bomb), and fuzzed:
reading them is a PdfUnreadable / ImageUnreadable that the router turns into INVALID_REQUEST naming the
file, or the file goes as it is with a warning where the model can take it; never anything else."""

from __future__ import annotations

import base64
import contextlib
import tempfile
from pathlib import Path

import pypdf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from media_samples import (
    PDF_SYNTAX,
    QUADRANTS,
    UNDECODABLE_FILTERS,
    b64,
    edited,
    flipped,
    gif,
    image_in,
    jpeg,
    noisy_png,
    pdf_bomb,
    pdf_with_content,
    pdf_with_text,
    photo,
    png,
    rewritten_pdf,
    rich_pdf,
    truncated,
    webp,
)
from PIL import Image

from colibri_router.context import Reading, gather
from colibri_router.context.paths import Found
from colibri_router.context.reading import PDF_PAGE_TOKENS, Limits, read_all
from colibri_router.conversation import CompletionRequest, Media, Message, Text
from colibri_router.errors import InvalidRequestError
from colibri_router.media.images import ImageUnreadable, downscaled
from colibri_router.media.pdf import PdfEncrypted, PdfUnreadable, pdf_pages, pdf_text
from colibri_router.providers import BUILTIN, Choice
from colibri_router.router.fit import MediaUnreadable, fit_media
from colibri_router.settings import load_settings

TEXT_PDF = pdf_with_text("Quarterly numbers")
NATIVE = Choice(BUILTIN["claude"], "claude-sonnet-4-5")  # reads PDFs; images up to 3.75 MB
TEXT_ONLY = Choice(BUILTIN["kimi"], "kimi-k2.6")  # reads images, and PDFs only as their text
LOCKED = rewritten_pdf(TEXT_PDF, user_password="s3cret")
OWNER_ONLY = rewritten_pdf(TEXT_PDF, user_password="")


def document(data: bytes, title: str | None = "report.pdf") -> Media:
    return Media("document", "application/pdf", b64(data), title=title)


def image(data: bytes, media_type: str = "image/png", title: str | None = "shot.png") -> Media:
    return Media("image", media_type, b64(data), title=title)


def fit(media: Media, choice: Choice) -> tuple[list[object], list[str]]:
    request = CompletionRequest(model=choice.model, messages=(Message("user", (Text("read"), media)),), max_tokens=50)
    fitted, warnings = fit_media(request, choice)
    return list(fitted.messages[0].parts[1:]), warnings


# -- PDFs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("entries", "stream", "words"), UNDECODABLE_FILTERS)
def test_a_pdf_pypdf_cannot_decode_is_refused_where_its_text_is_needed(
    entries: bytes, stream: bytes, words: str
) -> None:
    broken = document(pdf_with_content(stream, entries))
    with pytest.raises(PdfUnreadable, match=words):
        pdf_text(broken)
    with pytest.raises(MediaUnreadable) as raised:
        fit(broken, TEXT_ONLY)
    assert raised.value.code == "INVALID_REQUEST"
    assert "kimi-k2.6 cannot read PDFs, and report.pdf could not be read here to send its text" in raised.value.message
    assert words in raised.value.message
    parts, warnings = fit(broken, NATIVE)  # its pages count: the model reads it itself
    assert parts == [broken] and warnings == []


def test_a_pdf_bomb_stops_at_pypdfs_limit_and_is_refused_naming_it() -> None:
    with pytest.raises(MediaUnreadable, match=r"report\.pdf could not be read here .*Limit reached"):
        fit(document(pdf_bomb()), TEXT_ONLY)


@pytest.mark.parametrize("keep", [0.2, 0.5, 0.9])
def test_a_truncated_pdf_goes_as_it_is_with_a_warning_to_a_model_that_reads_pdfs(keep: float) -> None:
    cut = document(truncated(TEXT_PDF, keep))
    parts, warnings = fit(cut, NATIVE)
    assert parts == [cut]
    assert warnings == [
        "report.pdf could not be read here (it is damaged or unsupported: Stream has ended unexpectedly): "
        "sent as it is, its pages not counted against claude's limit"
    ]
    with pytest.raises(MediaUnreadable, match=r"report\.pdf could not be read here"):
        fit(cut, TEXT_ONLY)


@pytest.mark.parametrize(
    "error",
    [
        TypeError("unsupported operand"),
        AttributeError("'NullObject' object has no attribute 'get_object'"),
        NotImplementedError("unsupported filter"),
        RecursionError("maximum recursion depth exceeded"),
        KeyError("/Root"),
        pypdf.errors.DependencyError("cryptography>=3.1 is required for AES algorithm"),
        pypdf.errors.DeprecationError("a deprecated filter"),
        pypdf.errors.LimitReachedError("Limit reached while decompressing."),
    ],
)
@pytest.mark.parametrize("where", ["open", "pages", "text"])
def test_whatever_pypdf_raises_is_unreadable(monkeypatch: pytest.MonkeyPatch, error: Exception, where: str) -> None:
    """The exceptions seen on real PDFs, raised where pypdf raised them: opening, the page tree, a page's text."""

    def fail(*_args: object, **_kwargs: object) -> None:
        raise error

    target = {"open": (pypdf.PdfReader, "__init__"), "pages": (pypdf.PdfReader, "pages"), "text": None}[where]
    if target is None:
        monkeypatch.setattr(pypdf.PageObject, "extract_text", fail)
    elif where == "pages":
        monkeypatch.setattr(pypdf.PdfReader, "pages", property(fail))
    else:
        monkeypatch.setattr(*target, fail)
    with pytest.raises(PdfUnreadable, match=str(error).split()[0].strip("'")):
        pdf_text(document(TEXT_PDF))
    with pytest.raises(MediaUnreadable):
        fit(document(TEXT_PDF), TEXT_ONLY)
    if where != "text":
        parts, [warning] = fit(document(TEXT_PDF), NATIVE)
        assert len(parts) == 1 and warning.startswith("report.pdf could not be read here (")


@pytest.mark.parametrize("choice", [NATIVE, TEXT_ONLY], ids=["native", "text-only"])
def test_a_pdf_that_needs_a_password_is_said_to_be_encrypted(choice: Choice) -> None:
    with pytest.raises(PdfEncrypted):
        pdf_pages(document(LOCKED))
    with pytest.raises(InvalidRequestError) as raised:
        fit(document(LOCKED), choice)
    assert not isinstance(raised.value, MediaUnreadable)  # no model of a fallback chain can read it
    assert raised.value.message == (
        "report.pdf is encrypted: it opens only with its password, so no model can read it; send it decrypted"
    )


@pytest.mark.parametrize("pdf", [LOCKED, OWNER_ONLY], ids=["locked", "owner-only"])
def test_an_encrypted_pdf_that_cannot_be_decrypted_here_is_said_to_be_encrypted(
    monkeypatch: pytest.MonkeyPatch, pdf: bytes
) -> None:
    """As without a crypto package for AES: pypdf raises DependencyError when it opens the PDF."""

    def no_aes(*_args: object, **_kwargs: object) -> None:
        raise pypdf.errors.DependencyError("cryptography>=3.1 is required for AES algorithm")

    monkeypatch.setattr(pypdf._encryption.Encryption, "verify", no_aes)
    reason = "it is encrypted and could not be decrypted here: cryptography>=3.1 is required for AES algorithm"
    with pytest.raises(MediaUnreadable) as raised:
        fit(document(pdf), TEXT_ONLY)
    assert f"report.pdf could not be read here to send its text ({reason})" in raised.value.message
    parts, warnings = fit(document(pdf), NATIVE)
    assert len(parts) == 1 and warnings == [
        f"report.pdf could not be read here ({reason}): sent as it is, its pages not counted against claude's limit"
    ]


def test_a_pdf_encrypted_without_a_user_password_is_read() -> None:
    assert pdf_text(document(OWNER_ONLY)) == ["Quarterly numbers"]
    [part], warnings = fit(document(OWNER_ONLY), TEXT_ONLY)
    assert isinstance(part, Text) and "Quarterly numbers" in part.text
    assert warnings == ["kimi-k2.6 cannot read PDFs natively: sent the text of report.pdf, extracted locally"]


def test_a_pdf_without_text_is_skippable_by_a_fallback_chain() -> None:
    blank = rewritten_pdf(pdf_with_content(b""))
    with pytest.raises(MediaUnreadable, match=r"report\.pdf holds no text"):
        fit(document(blank), TEXT_ONLY)


PDF_SAMPLES = [TEXT_PDF, rich_pdf(), rich_pdf(), OWNER_ONLY, LOCKED]
EDITS = st.lists(st.tuples(st.integers(min_value=0, max_value=10_000), st.sampled_from(PDF_SYNTAX)), max_size=3)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(PDF_SAMPLES),
    positions=st.lists(st.integers(min_value=0, max_value=10_000), max_size=3),
    edits=EDITS,
    keep=st.floats(min_value=0.05, max_value=1.0),
)
def test_damaged_pdfs_are_unreadable_or_read_never_a_crash(
    sample: bytes, positions: list[int], edits: list[tuple[int, int]], keep: float
) -> None:
    """Real PDFs with bytes inverted, replaced by PDF syntax, and their tail cut (about one in thirty
    such edits of ``rich_pdf`` makes pypdf raise TypeError, AttributeError, NotImplementedError,
    AssertionError, DeprecationError or LimitReachedError)."""
    damaged = document(truncated(edited(flipped(sample, positions), edits), keep))
    for read in (pdf_pages, pdf_text):
        with contextlib.suppress(PdfUnreadable):
            read(damaged)
    for choice in (NATIVE, TEXT_ONLY):
        with contextlib.suppress(InvalidRequestError):
            fit(damaged, choice)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2_000))
def test_any_bytes_after_a_pdf_header_are_unreadable_or_read(tail: bytes) -> None:
    damaged = document(b"%PDF-1.7\n" + tail)
    for choice in (NATIVE, TEXT_ONLY):
        with contextlib.suppress(InvalidRequestError):
            fit(damaged, choice)


def test_pdfs_read_from_files_never_fail_the_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which model the PDF goes to decides; reading estimates a broken one's tokens from its size."""
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    (tmp_path / "ok.pdf").write_bytes(TEXT_PDF)
    (tmp_path / "locked.pdf").write_bytes(LOCKED)
    (tmp_path / "cut.pdf").write_bytes(truncated(TEXT_PDF))
    reading = gather(["*.pdf"], load_settings())
    assert {f.path: f.tokens_estimated for f in reading.files} == {
        "cut.pdf": PDF_PAGE_TOKENS,
        "locked.pdf": PDF_PAGE_TOKENS,
        "ok.pdf": PDF_PAGE_TOKENS,
    }
    assert reading.warnings == []


# -- images ------------------------------------------------------------------------------------------------

IMAGE_SAMPLES = [
    (png(40, 30), "image/png"),
    (noisy_png(40, 30), "image/png"),
    (jpeg(40, 30), "image/jpeg"),
    (photo(30, 40, 6), "image/jpeg"),
    (gif(40, 30), "image/gif"),
    (webp(40, 30), "image/webp"),
]


@pytest.mark.parametrize(
    ("data", "media_type"), IMAGE_SAMPLES, ids=["png", "noisy-png", "jpeg", "photo", "gif", "webp"]
)
def test_a_truncated_image_that_must_be_downscaled_is_refused_naming_it(data: bytes, media_type: str) -> None:
    cut = truncated(data, 0.5)
    limit = len(cut) // 2
    with pytest.raises(ImageUnreadable) as raised:
        downscaled(image(cut, media_type), limit, "claude")
    assert str(raised.value).startswith(
        f"shot.png ({len(cut)} bytes) is over claude's limit of {limit} bytes and could not be decoded to downscale "
    )
    assert str(raised.value).endswith("); send a smaller or repaired image")


def test_a_truncated_image_over_claudes_limit_is_skippable_and_fits_a_larger_wire() -> None:
    big = image(truncated(noisy_png(1250, 1150), 0.95))  # about 4.1 MB, missing its tail
    with pytest.raises(MediaUnreadable) as raised:
        fit(big, NATIVE)
    assert raised.value.code == "INVALID_REQUEST"
    assert "shot.png" in raised.value.message and "truncated" in raised.value.message
    parts, warnings = fit(big, Choice(BUILTIN["gemini"], "gemini-3.5-flash"))  # 15 MB: sent as it is
    assert parts == [big] and warnings == []


def test_a_decompression_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 500)  # 40x30 is then over twice the limit
    with pytest.raises(ImageUnreadable, match="decompression bomb"):
        downscaled(image(noisy_png(40, 30)), 100, "claude")


@pytest.mark.parametrize("orientation", range(1, 9))
def test_a_photo_is_downscaled_upright_whatever_its_exif_orientation(orientation: int) -> None:
    data = photo(60, 80, orientation)  # shown 60 wide and 80 high
    stored = image_in(data).size
    assert stored == ((60, 80) if orientation <= 4 else (80, 60))
    smaller, warning = downscaled(image(data, "image/jpeg", "IMG_0001.jpg"), len(data) - 1, "claude")
    sent = image_in(base64.b64decode(smaller.data or ""))
    width, height = sent.size
    assert width < 60 and abs(width / height - 60 / 80) < 0.05
    assert sent.getexif().get(0x0112, 1) == 1
    corners = [(width // 4, height // 4), (3 * width // 4, height // 4), (width // 4, 3 * height // 4)]
    corners.append((3 * width // 4, 3 * height // 4))
    for corner, color in zip(corners, QUADRANTS, strict=True):
        pixel = sent.convert("RGB").getpixel(corner)
        assert isinstance(pixel, tuple)
        assert all(abs(a - b) < 40 for a, b in zip(pixel, color, strict=True)), (corner, pixel, color)
    assert warning.startswith(f"IMG_0001.jpg (60x80, {len(data)} bytes) was over claude's limit")
    assert warning.endswith(f"sent downscaled to {width}x{height} ({len(base64.b64decode(smaller.data or ''))} bytes)")


@settings(max_examples=150, deadline=None)
@given(
    sample=st.sampled_from(IMAGE_SAMPLES),
    positions=st.lists(st.integers(min_value=0, max_value=100_000), min_size=1, max_size=8),
    keep=st.floats(min_value=0.05, max_value=1.0),
)
def test_byte_flipped_images_are_downscaled_or_refused_never_a_crash(
    sample: tuple[bytes, str], positions: list[int], keep: float
) -> None:
    data, media_type = sample
    damaged = image(truncated(flipped(data, positions), keep), media_type)
    try:
        smaller, _ = downscaled(damaged, max(1, damaged.size // 2), "claude")
    except ImageUnreadable:
        return
    image_in(base64.b64decode(smaller.data or ""))  # what is sent is a sound image


MAGIC = [b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBP", b"%PDF-1.4\n"]


@settings(max_examples=150, deadline=None)
@given(head=st.sampled_from(MAGIC), tail=st.binary(max_size=3_000))
def test_any_file_is_read_and_fitted_or_refused_never_a_crash(head: bytes, tail: bytes) -> None:
    """Whatever a file holds, from `files` to the request a wire encodes: INVALID_REQUEST or a request."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "anything"
        path.write_bytes(head + tail)
        reading = read_all([Found(path, "anything", explicit=True)], Limits(1_000_000))
    for part in reading.parts:
        if not isinstance(part, Media):
            continue
        for choice in (NATIVE, TEXT_ONLY):
            with contextlib.suppress(InvalidRequestError):
                fit(part, choice)
        if part.kind == "image":  # as a wire whose limit it is over would have it
            with contextlib.suppress(ImageUnreadable):
                downscaled(part, max(1, part.size // 2), "claude")


# -- files that cannot be read at all ---------------------------------------------------------------------


def test_a_file_gone_since_it_was_listed_is_refused_when_named_and_skipped_when_found(tmp_path: Path) -> None:
    gone, folder = tmp_path / "gone.py", tmp_path / "now-a-folder.py"
    folder.mkdir()
    with pytest.raises(InvalidRequestError, match=r"files: 'gone.py' could not be read \(No such file or directory\)"):
        read_all([Found(gone, "gone.py", explicit=True)], Limits(1_000_000))
    reading: Reading = read_all(
        [Found(gone, "gone.py", explicit=False), Found(folder, "now-a-folder.py", explicit=False)], Limits(1_000_000)
    )
    assert reading.files == []
    assert reading.warnings == [
        "files: gone.py could not be read (No such file or directory): left out",
        "files: now-a-folder.py could not be read (Is a directory): left out",
    ]
