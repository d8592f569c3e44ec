"""``files``: reading a repository glob and encoding it, and the memory an image set costs.

7a reads a 200-file repository of about 2 MB through ``src/**/*.py`` (the ignore rules, secret checks,
redaction and line numbers included), puts it into the last user turn and encodes the request for
the Anthropic wire: the median of many rounds (an absolute time, as the target is one; the machine is
shared, so the baseline, the same files read with ``Path.read_text`` alone, is reported beside it).

7b reads a 20 MB image set (ten 2 MB PNGs) the same way and encodes it for the Anthropic and OpenAI
wires; tracemalloc's peak over the image set's size is the figure. The content is held as base64
(4/3 of its size) in the request, and a wire body refers to those strings (Anthropic) or to data URLs
built from them (OpenAI); serialising the body to JSON for the socket is a transient copy on top,
reported apart.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks.measure import Report, Row
from colibri_router.providers import BUILTIN, Choice
from colibri_router.router import build_request
from colibri_router.router.call import Call, call_of
from colibri_router.router.fit import fit_media, has_media
from colibri_router.schema import RouterCallInput
from colibri_router.settings import load_settings
from colibri_router.wires import codec_for

REPO_FILES = 200
REPO_BYTES = 2_000_000
IMAGES = 10
IMAGE_BYTES = 2_000_000
GLOB_TARGET_MS = 150.0
MEMORY_TARGET = 3.0


def _repository(root: Path) -> None:
    line = "    value = compute(alpha, beta)  # a line of ordinary code\n"
    per_file = REPO_BYTES // REPO_FILES
    for index in range(REPO_FILES):
        path = root / "src" / f"pkg{index % 10}" / f"module_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line * (per_file // len(line)), encoding="utf-8")
    (root / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")


def _images(root: Path) -> None:
    (root / "shots").mkdir()
    for index in range(IMAGES):
        # PNG by its signature; the rest random, as compressed pixels are.
        data = b"\x89PNG\r\n\x1a\n" + os.urandom(IMAGE_BYTES - 8)
        (root / "shots" / f"shot_{index}.png").write_bytes(data)


async def _encode(files: list[str], model: str, provider: str) -> tuple[dict[str, object], Call]:
    args = RouterCallInput.model_validate({"prompt": "Review", "files": files, "model": model})
    expanded = await call_of(args, load_settings())
    request, _ = build_request(expanded, model)
    if has_media(request):
        request, _ = fit_media(request, Choice(BUILTIN[provider], model))
    return codec_for(BUILTIN[provider], model).encode(request).body, expanded


async def _glob_row(root: Path, rounds: int) -> Row:
    samples, baseline = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        body, _ = await _encode(["src/**/*.py"], "claude-sonnet-4-5", "claude")
        json.dumps(body)
        samples.append(time.perf_counter() - started)
        started = time.perf_counter()
        for path in sorted((root / "src").rglob("*.py")):
            path.read_text(encoding="utf-8")
        baseline.append(time.perf_counter() - started)
    median = statistics.median(samples) * 1000
    measured = (
        f"{median:.1f} ms (median of {rounds}; {REPO_FILES} files, {REPO_BYTES / 1e6:g} MB; read_text alone "
        f"{statistics.median(baseline) * 1000:.1f} ms)"
    )
    return Row(
        "8a files: 200-file repository glob read and encoded",
        measured,
        f"< {GLOB_TARGET_MS:g} ms",
        median < GLOB_TARGET_MS,
    )


async def _memory_rows() -> list[Row]:
    rows = []
    size = IMAGES * IMAGE_BYTES
    for provider, model in (("claude", "claude-sonnet-4-5"), ("openai", "gpt-4.1")):
        gc.collect()
        tracemalloc.start()
        try:
            body, expanded = await _encode(["shots"], model, provider)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
            payload = json.JSONEncoder(ensure_ascii=False).encode(body).encode()
            serialized = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        del body, expanded, payload
        ratio = peak / size
        measured = (
            f"{ratio:.2f}x ({peak / 1e6:.1f} MB peak for {size / 1e6:g} MB of images; JSON for the socket: "
            f"{serialized / size:.2f}x while it is built)"
        )
        rows.append(
            Row(
                f"8b files: 20 MB image set read and encoded, {provider}",
                measured,
                f"≤ {MEMORY_TARGET:g}x",
                ratio <= MEMORY_TARGET,
            )
        )
    return rows


async def run(rounds: int) -> Report:
    settings_before = os.environ.get("COLIBRI_WORKSPACE")
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        _repository(root)
        _images(root)
        os.environ["COLIBRI_WORKSPACE"] = str(root)
        try:
            rows = [await _glob_row(root, rounds), *await _memory_rows()]
        finally:
            if settings_before is None:
                os.environ.pop("COLIBRI_WORKSPACE", None)
            else:
                os.environ["COLIBRI_WORKSPACE"] = settings_before
    return Report(rows)
