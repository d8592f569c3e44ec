"""Walking a directory for a glob or a directory entry: git's ignore rules, credential stores left
out, and a bound on what one call's walks may cost.

The walk is depth first in a stable order (a directory's files by name, then its subdirectories by
name). It enters no ignored directory (:mod:`.ignore`), follows no symlinked directory (a link could
lead anywhere, or in a loop), lists only regular files (never a FIFO or a device, which could block a
read forever), and goes no deeper than the pattern can match (``*/*.py`` reads two levels).

Every directory entry seen counts against :class:`Budget`, shared by all the entries of one call,
and so does the time: ``files: ["/"]`` must answer in seconds, not walk the whole disk. Past either
limit the call is ``INVALID_REQUEST`` naming the entry and the limit.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from colibri_router.context.ignore import Frame, frame_above
from colibri_router.errors import InvalidRequestError

# How often (in entries) the clock is read: a clock read costs about as much as an entry.
_CLOCK_EVERY = 64

# Asked of each directory before it is entered and each file before it is kept: a reason to leave
# it out (shown in a warning), or None.
Screen = Callable[[Path, bool], "str | None"]


@dataclass(slots=True)
class Budget:
    """What the walks of one call may still cost: directory entries seen, and time."""

    max_entries: int
    max_seconds: float
    visited: int = 0
    started: float = field(default_factory=time.monotonic)

    def spend(self, entry: str) -> None:
        self.visited += 1
        if self.visited > self.max_entries:
            raise InvalidRequestError(
                f"files: {entry!r} visits more than {self.max_entries} files and directories "
                "(COLIBRI_FILES_MAX_ENTRIES, for all entries of a call); narrow it"
            )
        if self.visited % _CLOCK_EVERY == 0:
            self.check_time(entry)

    def check_time(self, entry: str) -> None:
        if time.monotonic() - self.started > self.max_seconds:
            raise InvalidRequestError(
                f"files: {entry!r} took more than {self.max_seconds:g} s to walk "
                "(COLIBRI_FILES_MAX_SECONDS, for all entries of a call); narrow it"
            )


@dataclass(slots=True)
class Walked:
    """The files a walk keeps, and what it left out with the reason (for warnings)."""

    files: list[Path] = field(default_factory=list)
    left_out: list[tuple[Path, str]] = field(default_factory=list)
    ignored_base: bool = False


def walk(
    entry: str,
    base: Path,
    pattern: re.Pattern[bytes],
    *,
    depth: int | None,
    workspace: Path,
    budget: Budget,
    screen: Screen,
) -> Walked:
    """The files under ``base`` whose path relative to ``base`` fully matches ``pattern`` (at most
    ``depth`` names deep; None: any depth)."""
    walked = Walked()
    budget.check_time(entry)
    above = frame_above(base, workspace)
    if above is None:
        walked.ignored_base = True
        return walked
    parent, name = above
    # (directory, its name in the parent frame, the parent's frame, its path relative to base)
    stack: list[tuple[Path, str, Frame, bytes]] = [(base, name, parent, b"")]
    while stack:
        directory, name, parent, relative = stack.pop()
        entries = _scan(directory, entry, budget)
        if entries is None:
            continue
        frame = parent.enter(directory, name, [e.name for e in entries])
        below = 0 if not relative else relative.count(b"/") + 1
        subdirectories = []
        for item in entries:
            child = relative + b"/" + os.fsencode(item.name) if relative else os.fsencode(item.name)
            if _is_directory(item):
                if (depth is None or below + 1 < depth) and not frame.ignored(item.name, directory=True):
                    path = Path(item.path)
                    reason = screen(path, True)
                    if reason is None:
                        subdirectories.append((path, item.name, frame, child))
                    else:
                        walked.left_out.append((path, reason))
                continue
            if not _is_file(item) or pattern.fullmatch(child) is None or frame.ignored(item.name, directory=False):
                continue
            path = Path(item.path)
            reason = screen(path, False)
            if reason is None:
                walked.files.append(path)
            else:
                walked.left_out.append((path, reason))
        stack.extend(reversed(subdirectories))
    return walked


def _scan(directory: Path, entry: str, budget: Budget) -> list[os.DirEntry[str]] | None:
    """The entries of ``directory`` by name, each one counted; None when it cannot be read."""
    entries = []
    try:
        with os.scandir(directory) as scan:
            for item in scan:
                budget.spend(entry)
                entries.append(item)
    except OSError:
        return None
    entries.sort(key=lambda item: item.name)
    return entries


def _is_directory(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_file(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_file()  # follows a symlink to a file; a dangling one is no file
    except OSError:
        return False
