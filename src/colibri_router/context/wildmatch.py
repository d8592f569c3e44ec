"""git's wildmatch as a regular expression: the one glob language of ``files`` entries and ignore rules.

git matches ignore patterns with its own ``wildmatch`` in pathname mode (``WM_PATHNAME``), byte by
byte. This module translates such a pattern into an equivalent regular expression over bytes, so a
path is matched the way git matches it (git's ``wildmatch.c`` and ``gitignore(5)`` are the reference):

- ``*`` matches any run of bytes but ``/``; ``?`` one byte but ``/``.
- ``**`` between slashes (or at either end) matches across directories: ``**/x`` also matches ``x``,
  ``a/**/b`` also ``a/b``, ``a/**`` everything inside ``a``. Elsewhere ``**`` is one ``*``.
- ``[...]`` is a class: ``[!...]`` and ``[^...]`` negate it, ``a-z`` is a range, ``[:alpha:]`` and
  the other POSIX classes work, ``\\`` escapes, a ``]`` first is literal; a class never matches ``/``.
  A class left open makes the whole pattern match nothing, as in git.
- ``\\`` makes the next character literal; a trailing lone ``\\`` matches nothing.

Matching bytes, not characters, keeps ``?`` and classes exact for non-ASCII names (``?`` is one
byte of ``é``'s two in git, so it must be here too).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

NEVER = rb"(?!)"

# POSIX classes as git's wildmatch defines them (ASCII only: git's sane_ctype).
_POSIX: dict[str, Callable[[int], bool]] = {
    "alnum": lambda b: chr(b).isalnum() and b < 128,
    "alpha": lambda b: chr(b).isalpha() and b < 128,
    "blank": lambda b: b in (0x20, 0x09),
    "cntrl": lambda b: b < 0x20 or b == 0x7F,
    "digit": lambda b: 0x30 <= b <= 0x39,
    "graph": lambda b: 0x21 <= b <= 0x7E,
    "lower": lambda b: 0x61 <= b <= 0x7A,
    "print": lambda b: 0x20 <= b <= 0x7E,
    "punct": lambda b: 0x21 <= b <= 0x7E and not chr(b).isalnum(),
    "space": lambda b: b in (0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D),
    "upper": lambda b: 0x41 <= b <= 0x5A,
    "xdigit": lambda b: chr(b) in "0123456789abcdefABCDEF",
}
_SLASH = ord("/")
_STAR, _QUESTION, _OPEN, _CLOSE, _BACKSLASH = (ord(c) for c in "*?[]\\")


class _Unmatchable(Exception):
    """The pattern can match nothing (an open class, a bad ``[:class:]``, a trailing ``\\``)."""


@functools.lru_cache(maxsize=1024)
def translate(pattern: str) -> bytes:
    """The regular expression (source, bytes) that fully matches what ``pattern`` matches."""
    try:
        return _translate(pattern.encode("utf-8", "surrogateescape"))
    except (_Unmatchable, UnicodeEncodeError):  # a lone surrogate names no file on any disk
        return NEVER


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str) -> re.Pattern[bytes]:
    return re.compile(translate(pattern), re.DOTALL)


def _translate(p: bytes) -> bytes:
    out: list[bytes] = []
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == _STAR:
            start = i
            while i < n and p[i] == _STAR:
                i += 1
            if i - start == 1:
                out.append(rb"[^/]*")
                continue
            before_ok = start == 0 or p[start - 1] == _SLASH
            after_slash = i < n and p[i] == _SLASH
            escaped_slash = i + 1 < n and p[i] == _BACKSLASH and p[i + 1] == _SLASH
            if not before_ok or not (i == n or after_slash or escaped_slash):
                out.append(rb"[^/]*")  # ``**`` inside a name is one ``*``
            elif i == n:
                out.append(rb".*")
            else:
                out.append(rb"(?:.*/)?")  # ``**/``: any directories, or none
                i += 2 if escaped_slash else 1
            continue
        if c == _QUESTION:
            out.append(rb"[^/]")
            i += 1
        elif c == _OPEN:
            members, i = _class(p, i + 1)
            out.append(_byte_class(members))
        elif c == _BACKSLASH:
            if i + 1 >= n:
                raise _Unmatchable
            out.append(re.escape(p[i + 1 : i + 2]))
            i += 2
        else:
            out.append(re.escape(p[i : i + 1]))
            i += 1
    return b"".join(out)


def _class(p: bytes, i: int) -> tuple[set[int], int]:
    """The bytes the class starting at ``p[i]`` (just after ``[``) matches, and where it ends."""
    n = len(p)
    negated = i < n and p[i] in b"!^"
    if negated:
        i += 1
    members: set[int] = set()
    previous: int | None = None
    first = True
    while True:
        if i >= n:
            raise _Unmatchable
        c = p[i]
        if c == _CLOSE and not first:
            i += 1
            break
        first = False
        if c == _BACKSLASH:
            i += 1
            if i >= n:
                raise _Unmatchable
            members.add(p[i])
            previous = p[i]
        elif c == ord("-") and previous is not None and i + 1 < n and p[i + 1] != _CLOSE:
            i += 1
            end = p[i]
            if end == _BACKSLASH:
                i += 1
                if i >= n:
                    raise _Unmatchable
                end = p[i]
            members.update(range(previous, end + 1))
            previous = None
        elif c == _OPEN and i + 1 < n and p[i + 1] == ord(":"):
            named, i = _posix_class(p, i)
            members.update(named or {_OPEN})  # no ``:]``: the ``[`` is an ordinary member
            previous = None if named else _OPEN
        else:
            members.add(c)
            previous = c
        i += 1
    chosen = set(range(256)) - members if negated else members
    chosen.discard(_SLASH)
    return chosen, i


def _posix_class(p: bytes, i: int) -> tuple[set[int], int]:
    """The bytes of ``[:name:]`` at ``p[i]`` and the index of its last byte; no bytes (and ``i``
    unchanged) when no ``:]`` closes it, which makes the ``[`` an ordinary member."""
    close = p.find(b"]", i + 2)
    if close == -1:
        raise _Unmatchable
    name = p[i + 2 : close]
    if not name.endswith(b":"):
        return set(), i
    test = _POSIX.get(name[:-1].decode("ascii", "replace"))
    if test is None:
        raise _Unmatchable  # git: a malformed [:class:] matches nothing
    return {b for b in range(256) if test(b)}, close


def _byte_class(members: set[int]) -> bytes:
    """``members`` as one regex class, written as runs (``[\\x00-\\x2e\\x30-\\x60...]``)."""
    if not members:
        return NEVER
    runs: list[bytes] = []
    ordered = sorted(members)
    start = previous = ordered[0]
    for byte in [*ordered[1:], -1]:
        if byte == previous + 1:
            previous = byte
            continue
        runs.append(b"\\x%02x" % start if start == previous else b"\\x%02x-\\x%02x" % (start, previous))
        start = previous = byte
    return b"[" + b"".join(runs) + b"]"
