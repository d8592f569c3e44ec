"""Broken and unusual media files through every wire (issue 32 §1-§2), from `files` on disk through the
router to the strict fake upstream: a PDF that cannot be read goes as it is (with a warning) where the
model reads PDFs and is INVALID_REQUEST naming it where its text is needed; an encrypted PDF is said to
be encrypted; a truncated image that must be downscaled is INVALID_REQUEST; a phone photo stays upright."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream
from media_samples import (
    UNDECODABLE_FILTERS,
    b64,
    image_in,
    noisy_png,
    pdf_with_content,
    pdf_with_text,
    photo,
    rewritten_pdf,
    truncated,
)

from colibri_router.call.service import serve
from colibri_router.errors import ColibriError
from colibri_router.providers import BUILTIN
from colibri_router.schema import RouterCallInput

# (model, fake upstream route, whether the model reads PDFs natively)
WIRES = [
    ("claude-sonnet-4-5", "anthropic", True),
    ("gpt-4.1", "openai", True),
    ("gemini-3.5-flash", "gemini", True),
    ("openrouter:anthropic/claude-sonnet-4.5", "openrouter", True),
    ("ollama:llava", "ollama", False),
    ("command-a-vision-07-2025", "cohere", False),
    ("kimi-k2.6", "kimi", False),
    ("mistral-small-latest", "mistral", False),
]
IDS = [route for _, route, _ in WIRES]
PROVIDERS = {"claude", "openai", "gemini", "openrouter", "ollama", "cohere", "kimi", "mistral"}
TEXT_PDF = pdf_with_text("Quarterly numbers")
# Made once: a 4.1 MB PNG missing its tail, and a 4.3 MB phone photo shown 1650 wide and 2200 high,
# stored turned (EXIF orientation 6); both over Claude's 3.75 MB, under every other wire's limit.
CUT_PNG = truncated(noisy_png(1250, 1150), 0.95)
PORTRAIT = photo(1650, 2200, 6, noise=True)


@pytest.fixture(autouse=True)
def providers(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeUpstream:
    for name in PROVIDERS:
        spec = BUILTIN[name]
        route = "anthropic" if name == "claude" else name
        monkeypatch.setenv(spec.base_url_env, fake_upstream.base_url(route))
        for variable in spec.key_envs:
            monkeypatch.setenv(variable, f"sk-{name}-test-0123456789")
    monkeypatch.setenv("COLIBRI_STORE", "off")
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    return fake_upstream


async def ask(model: str, files: dict[str, bytes], tmp_path: Path, **args: Any) -> Any:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    request = RouterCallInput.model_validate({"model": model, "prompt": "Read these", "files": list(files), **args})
    return await serve(request)


def sent(fake: FakeUpstream, route: str) -> str:
    """The one request ``route`` received, as JSON text."""
    [request] = fake.route(route).requests
    assert fake.violations == []
    return json.dumps(request.body)


async def refused(model: str, files: dict[str, bytes], tmp_path: Path, fake: FakeUpstream) -> ColibriError:
    with pytest.raises(ColibriError) as raised:
        await ask(model, files, tmp_path)
    assert raised.value.code == "INVALID_REQUEST"
    assert fake.requests == []
    return raised.value


@pytest.mark.parametrize(("model", "route", "native"), WIRES, ids=IDS)
async def test_a_truncated_pdf(providers: FakeUpstream, tmp_path: Path, model: str, route: str, native: bool) -> None:
    cut = truncated(TEXT_PDF, 0.5)
    if native:
        result = await ask(model, {"scan.pdf": cut}, tmp_path)
        assert b64(cut) in sent(providers, route)
        limited = {"anthropic": "claude", "gemini": "gemini"}  # the wires with a page limit
        unchecked = f", its pages not counted against {limited[route]}'s limit" if route in limited else ""
        assert (
            "scan.pdf could not be read here (it is damaged or unsupported: Stream has ended unexpectedly): "
            f"sent as it is{unchecked}"
        ) in result.warnings
    else:
        error = await refused(model, {"scan.pdf": cut}, tmp_path, providers)
        assert "cannot read PDFs, and scan.pdf could not be read here to send its text" in error.message


@pytest.mark.parametrize(("entries", "stream", "words"), UNDECODABLE_FILTERS)
@pytest.mark.parametrize(("model", "route", "native"), WIRES, ids=IDS)
async def test_a_pdf_whose_content_pypdf_cannot_decode(
    providers: FakeUpstream,
    tmp_path: Path,
    model: str,
    route: str,
    native: bool,
    entries: bytes,
    stream: bytes,
    words: str,
) -> None:
    data = pdf_with_content(stream, entries)
    if native:
        result = await ask(model, {"spec.pdf": data}, tmp_path)
        assert b64(data) in sent(providers, route)
        assert not any("spec.pdf" in warning for warning in result.warnings)
    else:
        error = await refused(model, {"spec.pdf": data}, tmp_path, providers)
        assert "spec.pdf could not be read here" in error.message and words in error.message


@pytest.mark.parametrize(("model", "route", "native"), WIRES, ids=IDS)
async def test_an_encrypted_pdf_is_said_to_be_encrypted(
    providers: FakeUpstream, tmp_path: Path, model: str, route: str, native: bool
) -> None:
    locked = rewritten_pdf(TEXT_PDF, user_password="s3cret")
    error = await refused(model, {"locked.pdf": locked}, tmp_path, providers)
    assert error.message == (
        "locked.pdf is encrypted: it opens only with its password, so no model can read it; send it decrypted"
    )


@pytest.mark.parametrize(("model", "route", "native"), WIRES, ids=IDS)
async def test_a_pdf_encrypted_only_against_changes_is_read(
    providers: FakeUpstream, tmp_path: Path, model: str, route: str, native: bool
) -> None:
    readable = rewritten_pdf(TEXT_PDF, user_password="")
    await ask(model, {"report.pdf": readable}, tmp_path)
    body = sent(providers, route)
    assert (b64(readable) in body) if native else ("Quarterly numbers" in body)


@pytest.mark.parametrize(("model", "route", "native"), WIRES, ids=IDS)
async def test_a_truncated_image_over_the_wires_limit(
    providers: FakeUpstream, tmp_path: Path, model: str, route: str, native: bool
) -> None:
    if route == "anthropic":
        error = await refused(model, {"shot.png": CUT_PNG}, tmp_path, providers)
        assert error.message.startswith(f"shot.png ({len(CUT_PNG)} bytes) is over claude's limit")
        assert "could not be decoded to downscale it (image file is truncated" in error.message
    else:  # under the wire's limit: it goes as it is, and the model says what it sees
        result = await ask(model, {"shot.png": CUT_PNG}, tmp_path)
        assert b64(CUT_PNG) in sent(providers, route)
        assert not any("shot.png" in warning for warning in result.warnings)


async def test_a_fallback_chain_skips_a_model_that_cannot_take_a_broken_file(
    providers: FakeUpstream, tmp_path: Path
) -> None:
    cut = truncated(TEXT_PDF, 0.5)
    result = await ask("kimi-k2.6", {"scan.pdf": cut}, tmp_path, fallback=["claude-sonnet-4-5"])
    assert result.provider == "claude"
    assert result.warnings[0].startswith("skipped kimi-k2.6: kimi-k2.6 cannot read PDFs, and scan.pdf could not")
    assert [attempt.outcome for attempt in result.attempts] == ["INVALID_REQUEST", "ok"]
    assert providers.route("kimi").requests == []


@pytest.mark.parametrize(("model", "route", "native"), WIRES, ids=IDS)
async def test_a_portrait_phone_photo_stays_portrait(
    providers: FakeUpstream, tmp_path: Path, model: str, route: str, native: bool
) -> None:
    stored = image_in(PORTRAIT).size
    assert stored == (2200, 1650)  # as the phone stored it: landscape, with orientation 6
    result = await ask(model, {"IMG_0042.jpg": PORTRAIT}, tmp_path)
    body = sent(providers, route)
    if route != "anthropic":
        assert b64(PORTRAIT) in body  # under the limit: sent as it is, EXIF and all
        return
    data = json.loads(body)["messages"][0]["content"][-1]["source"]["data"]
    width, height = image_in(base64.b64decode(data)).size
    assert height > width and abs(width / height - 1650 / 2200) < 0.01
    [warning] = [w for w in result.warnings if w.startswith("IMG_0042.jpg")]
    assert warning.startswith(f"IMG_0042.jpg (1650x2200, {len(PORTRAIT)} bytes) was over claude's limit")
    assert warning.endswith(f"sent downscaled to {width}x{height} ({len(base64.b64decode(data))} bytes)")
