"""One ignore file's rules, read and matched as git reads and matches them (``gitignore(5)``, git's
``dir.c``).

A line is a pattern; ``#`` starts a comment, blank lines are nothing, trailing spaces go unless a
``\\`` escapes them, a leading ``!`` re-includes, a trailing ``/`` matches directories only. A pattern
without any other ``/`` matches a name at any depth below the file's directory; one with a ``/``
matches the path relative to that directory (a leading ``/`` only anchors it). Patterns are globs in
git's wildmatch (:mod:`.wildmatch`). Within one file the LAST pattern that matches decides.

We do not use ``pathspec`` here: its ``GitIgnoreSpec`` answers whole paths (a match on a parent
directory counts), and it gets directories wrong when they are re-included: in pathspec 1.1.1
``GitIgnoreSpec.from_lines(["*", "!pkg/"]).match_file("pkg/")`` is True where git re-includes
``pkg`` (``git check-ignore -v --no-index pkg`` names ``!pkg/``), so the Go allow-list template
(``*``, ``!*/``, ``!*.go``) read nothing below the root. Upstream knows: python-pathspec PR #133 (the
``*`` shortcut loses the directory marker), issue #137 (more directory cases, open). git decides
each directory on its own as it descends, which is what :mod:`.walk` does with these rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from colibri_router.context.wildmatch import NEVER, translate


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern: its regex over bytes, whether it re-includes, whether it needs a directory."""

    regex: bytes
    negated: bool
    directory_only: bool


def parse(text: str) -> list[Rule]:
    """The rules of an ignore file's text (decoded with ``surrogateescape``, so bytes survive)."""
    rules = []
    for raw in text.removeprefix("\ufeff").split("\n"):
        line = raw.removesuffix("\r")
        if not line or line.startswith("#"):
            continue
        rule = parse_line(_trim_trailing_spaces(line))
        if rule is not None:
            rules.append(rule)
    return rules


def parse_line(line: str) -> Rule | None:
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    directory_only = line.endswith("/")
    if directory_only:
        line = line[:-1]
    if not line:
        return None
    # With a slash: the path relative to the file's directory. Without: the name, at any depth.
    regex = translate(line.removeprefix("/")) if "/" in line else rb"(?:.*/)?" + translate(line)
    return Rule(regex, negated, directory_only)


def _trim_trailing_spaces(line: str) -> str:
    """git's ``trim_trailing_spaces``: drop the trailing run of spaces, not one a ``\\`` escapes."""
    i = 0
    last_space: int | None = None
    while i < len(line):
        char = line[i]
        if char == " ":
            if last_space is None:
                last_space = i
        else:
            last_space = None
            if char == "\\":
                i += 1
                if i == len(line):
                    return line
        i += 1
    return line if last_space is None else line[:last_space]


class RuleList:
    """The rules of one source (a ``.gitignore``, ``info/exclude``, the global file) for paths below
    ``base``, the directory they were read in, given relative to the walk's root (``b""``: the root)."""

    __slots__ = ("_dirs", "_dirs_negated", "_files", "_files_negated", "_prefix")

    def __init__(self, rules: list[Rule], base: bytes = b"") -> None:
        self._prefix = base + b"/" if base else b""
        # One regex per kind of path, its alternatives last rule first: the first alternative that
        # matches is the last rule that matches, which is the one git obeys.
        self._dirs, self._dirs_negated = _combined(list(reversed(rules)))
        self._files, self._files_negated = _combined([rule for rule in reversed(rules) if not rule.directory_only])

    def decide(self, relative: bytes, *, directory: bool) -> bool | None:
        """True: ``relative`` (a path below the root) is ignored; False: re-included; None: no rule
        here matches it."""
        regex, negated = (self._dirs, self._dirs_negated) if directory else (self._files, self._files_negated)
        if regex is None or not relative.startswith(self._prefix):
            return None
        match = regex.fullmatch(relative, len(self._prefix))
        if match is None:
            return None
        return not negated[(match.lastindex or 1) - 1]


def _combined(rules: list[Rule]) -> tuple[re.Pattern[bytes] | None, list[bool]]:
    live = [rule for rule in rules if rule.regex != NEVER]
    if not live:
        return None, []
    source = b"|".join(b"(" + rule.regex + b")" for rule in live)
    return re.compile(source, re.DOTALL), [rule.negated for rule in live]
