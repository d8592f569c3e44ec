"""README.md and the pages of docs/, for the tests that check what they say.

The README is the first five minutes; every other topic has its page in docs/ (``docs/tools.md``,
``docs/errors.md``...). Tests name the page their facts live on, so moving a section is one edit here
or in the test, and a page that loses its section fails loudly.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def page_path(name: str) -> Path:
    """``README.md`` is the repository's; any other name is a page of docs/."""
    return ROOT / name if name == "README.md" else DOCS / name


def page(name: str) -> str:
    path = page_path(name)
    assert path.is_file(), f"{path.relative_to(ROOT)} does not exist"
    return path.read_text(encoding="utf-8")


def page_names() -> list[str]:
    """README.md, then every page of docs/ in name order."""
    return ["README.md", *sorted(path.name for path in DOCS.glob("*.md"))]


def all_docs() -> str:
    """The README and every page, one text."""
    return "\n".join(page(name) for name in page_names())


def section(name: str, title: str) -> str:
    """The body of the heading ``title`` (any level) on a page, up to the next heading of its level or above."""
    text = page(name)
    match = re.search(rf"^(#+) {re.escape(title)}\n", text, re.MULTILINE)
    assert match, f"{name} has no heading {title!r}"
    level = len(match.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(text, match.end())
    return text[match.end() : end.start() if end else len(text)]


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block, in order (language ``""`` when the fence names none)."""
    return [(language.strip(), body) for language, body in _FENCE.findall(text)]


def code_blocks(text: str, language: str | None = None) -> list[str]:
    return [body for lang, body in fenced_blocks(text) if language is None or lang == language]
