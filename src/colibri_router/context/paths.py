"""From ``files`` entries to the files they name: the workspace, globs, directories, confinement.

Relative entries start at the workspace (``COLIBRI_WORKSPACE``, else the working directory); ``~`` is
the user's home. An entry with ``*``, ``?`` or ``[`` is a glob (``**`` spans directories); a directory
stands for ``dir/**/*``. Globs and directories honour the ignore rules (:mod:`.ignore`); a file named
explicitly is always read. Over HTTP the disk is the server's: every path must stay inside
``COLIBRI_HTTP_FILES_ROOT`` (no ``..``, no ``~``, no symlink leading out, no absolute path elsewhere).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from colibri_router.context.ignore import ignores_for, walk
from colibri_router.errors import InvalidRequestError

MAX_GLOB_FILES = 500
_MAGIC = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class Found:
    """A file to read: where it is, the path the model is shown, whether the caller named it."""

    path: Path
    shown: str
    explicit: bool


@dataclass(frozen=True, slots=True)
class Place:
    """Where entries are read: the workspace, and the root every path must stay in (None: anywhere)."""

    workspace: Path
    confined_to: Path | None = None

    def shown(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix() if path.is_relative_to(self.workspace) else str(path)


def local_place(workspace: str | None) -> Place:
    root = Path(workspace).expanduser() if workspace else Path.cwd()
    if not root.is_dir():
        raise InvalidRequestError(f"COLIBRI_WORKSPACE {str(root)!r} is not a directory")
    return Place(root.resolve())


def http_place(files_root: str | None) -> Place:
    if not files_root:
        raise InvalidRequestError(
            "`files` reads the server's disk, which over HTTP needs COLIBRI_HTTP_FILES_ROOT on the server; "
            "paste the content instead"
        )
    root = Path(files_root).expanduser()
    if not root.is_dir():
        raise InvalidRequestError(f"COLIBRI_HTTP_FILES_ROOT {str(root)!r} is not a directory")
    root = root.resolve()
    return Place(root, confined_to=root)


def expand(entries: list[str], place: Place) -> tuple[list[Found], list[str]]:
    """The files ``entries`` name, each once, in order; and warnings (a glob matching nothing)."""
    found: dict[Path, Found] = {}
    warnings: list[str] = []
    for entry in entries:
        matches = _expand_one(entry, place)
        if not matches:
            warnings.append(f"files: {entry!r} matched no file")
        for match in matches:
            found.setdefault(match.path.resolve(), match)
    return list(found.values()), warnings


def _expand_one(entry: str, place: Place) -> list[Found]:
    path = _absolute(entry, place)
    parts = path.parts
    magic = next((i for i, part in enumerate(parts) if _MAGIC.search(part)), None)
    if magic is None:
        if path.is_dir():
            return _walked(entry, path, _glob_regex("**/*"), place)
        if not path.is_file():
            raise InvalidRequestError(f"files: {entry!r} is not a file or directory ({place.shown(path)})")
        _check_confined(entry, path, place)
        return [Found(path, place.shown(path), explicit=True)]
    base = Path(*parts[:magic])
    if not base.is_dir():
        return []
    return _walked(entry, base, _glob_regex("/".join(parts[magic:])), place)


def _absolute(entry: str, place: Place) -> Path:
    if place.confined_to is not None:
        if entry.startswith("~") or ".." in Path(entry).parts:
            raise InvalidRequestError(f"files: {entry!r} leaves COLIBRI_HTTP_FILES_ROOT (no `~` or `..` over HTTP)")
        path = Path(entry)
        if path.is_absolute() and not path.is_relative_to(place.confined_to):
            raise InvalidRequestError(f"files: {entry!r} is outside COLIBRI_HTTP_FILES_ROOT")
        return place.workspace / path
    return place.workspace / Path(entry).expanduser()  # an absolute path replaces the workspace


def _walked(entry: str, base: Path, pattern: re.Pattern[str], place: Place) -> list[Found]:
    _check_confined(entry, base, place)
    ignores = ignores_for(place.workspace)
    matches = []
    for path in walk(base, ignores):
        if pattern.fullmatch(path.relative_to(base).as_posix()) is None:
            continue
        matches.append(Found(path, place.shown(path), explicit=False))
        if len(matches) > MAX_GLOB_FILES:
            raise InvalidRequestError(
                f"files: {entry!r} matches more than {MAX_GLOB_FILES} files (the limit for one glob); "
                "narrow the pattern"
            )
    for match in matches:
        _check_confined(entry, match.path, place)
    return matches


def _check_confined(entry: str, path: Path, place: Place) -> None:
    root = place.confined_to
    if root is not None and not Path(os.path.realpath(path)).is_relative_to(root):
        raise InvalidRequestError(f"files: {entry!r} leads outside COLIBRI_HTTP_FILES_ROOT (through a symlink)")


@functools.lru_cache(maxsize=128)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over ``/``-separated relative paths: ``**`` spans directories, ``*`` and ``?`` stay
    within one name, ``[...]`` is a class (``[!...]`` negated)."""
    pieces = []
    components = pattern.split("/")
    for index, component in enumerate(components):
        last = index == len(components) - 1
        if component == "**":
            pieces.append(".*" if last else "(?:[^/]+/)*")
            continue
        pieces.append(_component_regex(component) + ("" if last else "/"))
    return re.compile("".join(pieces))


def _component_regex(component: str) -> str:
    out, i = [], 0
    while i < len(component):
        char = component[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := component.find("]", i + 2)) != -1:
            inner = component[i + 1 : end]
            negated = inner.startswith("!")
            inner = re.escape(inner[1:] if negated else inner).replace(r"\-", "-")
            out.append(f"[{'^' if negated else ''}{inner}]")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
