"""The full detection over a text the pre-filter let through: blocks over the whole text (a private
key spans lines), then each line that holds a hint through detect-secrets' plugins, the shapes and
the secret-named assignments; every place found becomes ``[redacted]``, overlapping places once (the
first kind to claim a place names it)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from colibri_router.redaction import REDACTED, Scan
from colibri_router.redaction.detector import Hit, detector
from colibri_router.redaction.hints import may_hold_secret
from colibri_router.redaction.shapes import BLOCKS, Shape, line_shapes


def detect(text: str, name: str | None) -> Scan:
    kinds: dict[str, None] = {}
    text = _replace(text, _shape_hits(text, BLOCKS), kinds)
    plugins = detector()
    groups = plugins.keyword_groups(name)
    shapes = line_shapes()
    # Line by line, and only the lines that hold a hint: the plugins' patterns (some try every
    # position of the text) cost about twice as much run once over a whole source file.
    lines = text.splitlines(keepends=True)
    changed = False
    for index, line in enumerate(lines):
        if not may_hold_secret(line):
            continue
        hits = [
            Hit(start + hit.start, start + hit.end, hit.kind)
            for start, piece in _windows(line)
            if may_hold_secret(piece)
            # Named kinds first: a key in `api_key="..."` is named by its shape, not as a secret-named value.
            for hit in (*plugins.hits(piece), *_shape_hits(piece, shapes), *plugins.keyword_hits(piece, groups))
        ]
        if hits:
            lines[index] = _replace(line, hits, kinds)
            changed = True
    return Scan("".join(lines) if changed else text, tuple(kinds))


# A long line (minified code, a data dump) is read in overlapping windows: some plugins' patterns cost
# the square of a line's length on repetitive text (800,000 characters took minutes), and a window
# holds every token up to OVERLAP characters long whole, in one window at least.
WINDOW = 4096
OVERLAP = 1024


def _windows(line: str) -> Iterator[tuple[int, str]]:
    """``line`` as (offset, piece) windows of WINDOW characters, each overlapping the next by OVERLAP."""
    if len(line) <= WINDOW:
        yield 0, line
        return
    for start in range(0, len(line) - OVERLAP, WINDOW - OVERLAP):
        yield start, line[start : start + WINDOW]


def _shape_hits(text: str, shapes: Iterable[Shape]) -> Iterator[Hit]:
    for shape in shapes:
        for match in shape.pattern.finditer(text):
            start, end = match.span(shape.group)
            if end > start:
                yield Hit(start, end, shape.kind)


def _replace(text: str, hits: Iterable[Hit], kinds: dict[str, None]) -> str:
    """``text`` with each hit replaced; a hit overlapping one already taken widens it (the secret is
    never left half-visible) and names nothing new. ``[redacted]`` itself is never a hit's whole
    text, so a redacted text is redacted again unchanged."""
    taken: list[list[int]] = []
    named: list[str] = []
    for start, end, kind in hits:
        if text[start:end] == REDACTED:
            continue
        for span in taken:
            if start < span[1] and end > span[0]:
                span[0], span[1] = min(span[0], start), max(span[1], end)
                break
        else:
            taken.append([start, end])
            named.append(kind)
    if not taken:
        return text
    for kind in named:
        kinds.setdefault(kind)
    pieces: list[str] = []
    last = 0
    for start, end in _merged(taken):
        pieces.append(text[last:start])
        pieces.append(REDACTED)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _merged(spans: list[list[int]]) -> Iterator[tuple[int, int]]:
    spans.sort()
    current = spans[0][:]
    for start, end in spans[1:]:
        if start <= current[1]:
            current[1] = max(current[1], end)
        else:
            yield current[0], current[1]
            current = [start, end]
    yield current[0], current[1]
