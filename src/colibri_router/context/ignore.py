"""Which files a glob or a directory leaves out: the workspace's ``.gitignore`` and a built-in list.

The ``.gitignore`` rules are read with ``pathspec``'s :class:`~pathspec.GitIgnoreSpec`, which follows
git's own reading (negations, anchored and directory-only patterns, ``**``); writing that matcher by
hand is easy to get subtly wrong. Only the workspace root's ``.gitignore`` is read. A file named
explicitly is always read: these rules apply to what a glob or a directory expands to.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

# Never what a reviewer wants, and large: version control, dependencies, caches, lock files.
BUILTIN_IGNORES = (
    ".git/",
    "node_modules/",
    "__pycache__/",
    ".venv/",
    "*.lock",
    "package-lock.json",
    "pnpm-lock.yaml",
    "npm-shrinkwrap.json",
)


@dataclass(frozen=True, slots=True)
class Ignores:
    """The rules for one walk: the built-ins everywhere, the workspace's ``.gitignore`` under it."""

    builtin: pathspec.GitIgnoreSpec
    gitignore: pathspec.GitIgnoreSpec | None
    workspace: Path

    def ignored(self, path: Path, *, directory: bool, base: Path) -> bool:
        """Whether ``path`` (a directory when ``directory``) found under ``base`` is left out."""
        suffix = "/" if directory else ""
        if self.builtin.match_file(path.relative_to(base).as_posix() + suffix):
            return True
        if self.gitignore is None or not path.is_relative_to(self.workspace):
            return False
        return self.gitignore.match_file(path.relative_to(self.workspace).as_posix() + suffix)


def ignores_for(workspace: Path) -> Ignores:
    """The rules under ``workspace``, its ``.gitignore`` read now (cached on the file's stat)."""
    gitignore = workspace / ".gitignore"
    try:
        status = gitignore.stat()
    except OSError:
        return Ignores(_builtin(), None, workspace)
    return Ignores(_builtin(), _gitignore(str(gitignore), status.st_mtime_ns, status.st_size), workspace)


@functools.cache
def _builtin() -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(BUILTIN_IGNORES)


@functools.lru_cache(maxsize=8)
def _gitignore(path: str, _mtime: int, _size: int) -> pathspec.GitIgnoreSpec:
    with open(path, encoding="utf-8", errors="replace") as file:
        return pathspec.GitIgnoreSpec.from_lines(file.read().splitlines())


def walk(base: Path, ignores: Ignores) -> list[Path]:
    """Every file under ``base`` that the rules keep, in a stable order; ignored directories are not
    entered, and symlinked directories are not followed (a link could lead anywhere, or in a loop)."""
    found: list[Path] = []
    for root, dirs, files in os.walk(base):
        here = Path(root)
        dirs[:] = sorted(d for d in dirs if not ignores.ignored(here / d, directory=True, base=base))
        found.extend(here / f for f in sorted(files) if not ignores.ignored(here / f, directory=False, base=base))
    return found
