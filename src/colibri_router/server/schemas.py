"""The tools' published JSON schemas, precomputed: ``tool_schemas.json`` beside this module.

The host reads them from ``tools/list`` right after ``initialize``; generating them at start-up would
mean building every input and result model first, most of what the server would add to a bare SDK
server's start-up. :mod:`.generate_schemas` writes the file from those models, and a test fails when
it no longer matches them.

router_call's ``provider`` enum is not in the file: it is the registry's names when the server
starts (:func:`with_provider_names`), which a user's config file can extend.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SCHEMAS_FILE = Path(__file__).with_name("tool_schemas.json")


def published() -> dict[str, dict[str, Any]]:
    """Tool name → ``{"input": schema, "output": schema or None}``; a fresh copy, which the caller
    may change."""
    parsed: dict[str, dict[str, Any]] = json.loads(_file_text())
    return parsed


@functools.cache
def _file_text() -> str:
    return SCHEMAS_FILE.read_text(encoding="utf-8")


def with_provider_names(schema: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """``schema`` (router_call's input schema) with ``provider`` limited to ``names``, so the host's
    model cannot invent one."""
    schema["properties"]["provider"]["enum"] = list(names)
    return schema
