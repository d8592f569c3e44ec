"""A long line (minified code, a data dump) is scanned in overlapping windows: a token anywhere in it,
a window's edge included, is still caught, and a whole file of one line is read in linear time
(benchmarks/redaction.py measures it; here only the windows' coverage is checked)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from secrets_corpus import corpus

from colibri_router.redaction import REDACTED, scan
from colibri_router.redaction.scanning import OVERLAP, WINDOW, _windows

GITHUB = next(sample for sample in corpus() if sample.kind == "GitHub token").secrets[0]


@given(length=st.integers(min_value=0, max_value=5 * WINDOW))
def test_the_windows_cover_the_line_and_overlap_by_overlap(length: int) -> None:
    line = "x" * length
    windows = list(_windows(line))
    assert windows[0][0] == 0
    assert windows[-1][0] + len(windows[-1][1]) == length
    for (start, piece), (next_start, _) in itertools.pairwise(windows):
        assert piece == line[start : start + WINDOW]
        assert start + len(piece) - next_start == OVERLAP


@settings(max_examples=40)
@given(offset=st.integers(min_value=0, max_value=3 * WINDOW))
def test_a_token_anywhere_in_a_long_line_is_caught(offset: int) -> None:
    line = "q" * offset + " " + GITHUB + " " + "q" * (3 * WINDOW - offset)
    scanned = scan(line, "bundle.min.js")
    assert GITHUB not in scanned.text and REDACTED in scanned.text
    assert scanned.kinds == ("GitHub token",)
