"""JSON log lines: rendered exactly as json.dumps with structlog's fallback for other types would."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from colibri_router.logs import configure_logging, get_logger


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    saved, was_configured = structlog.get_config(), structlog.is_configured()
    yield
    structlog.reset_defaults()
    if was_configured:
        structlog.configure(**saved)


class Labelled:
    def __structlog__(self) -> str:
        return "labelled"


def test_values_json_cannot_encode_use_structlogs_fallback() -> None:
    stream = io.StringIO()
    configure_logging("info", stream)

    get_logger("t").info("line", path=Path("/tmp/x"), labelled=Labelled(), count=3, ratio=0.5, text="é")

    line = json.loads(stream.getvalue())
    assert (line["path"], line["labelled"]) == (repr(Path("/tmp/x")), "labelled")
    assert (line["count"], line["ratio"], line["text"]) == (3, 0.5, "é")
    assert "\\u00e9" in stream.getvalue()  # ASCII-only, as json.dumps writes by default
