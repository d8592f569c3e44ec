"""From ``files`` entries to the files they name: the workspace, globs, directories, confinement.

Relative entries start at the workspace (``COLIBRI_WORKSPACE``, else the working directory); ``~`` is
the user's home. An entry with ``*``, ``?`` or ``[`` is a glob in git's wildmatch (:mod:`.wildmatch`:
``**`` spans directories, ``[!...]`` and ``[^...]`` negate a class); a directory stands for
``dir/**``. Globs and directories are walked (:mod:`.walk`) under git's ignore rules, leave out
credential stores and the home directory's hidden entries with a warning, and are bounded in entries
and time; a file named explicitly is always read, unless it is a secret (:mod:`.secrets`, checked
when read). Over stdio a path outside the workspace is read with a warning; over HTTP the disk is the
server's: every path must stay inside ``COLIBRI_HTTP_FILES_ROOT`` (no ``..``, no ``~``, no symlink
leading out, no absolute path elsewhere).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from colibri_router.context.secrets import HIDDEN_IN_HOME, allowed, credential_store, hidden_in_home
from colibri_router.context.walk import Budget, Walked, walk
from colibri_router.context.wildmatch import compiled
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


@dataclass(frozen=True, slots=True)
class WalkLimits:
    """What the walks of one call may cost (entries seen, seconds), and what the user allows."""

    max_entries: int
    max_seconds: float
    allow: tuple[str, ...] = ()


def expand(entries: list[str], place: Place, limits: WalkLimits) -> tuple[list[Found], list[str]]:
    """The files ``entries`` name, each once, in order; and warnings (a glob matching nothing, what a
    walk left out, a path outside the workspace)."""
    budget = Budget(limits.max_entries, limits.max_seconds)
    found: dict[Path, Found] = {}
    warnings: list[str] = []
    for entry in entries:
        matches = _expand_one(entry, place, budget, limits.allow, warnings)
        for match in matches:
            found.setdefault(match.path.resolve(), match)
    return list(found.values()), warnings


def _expand_one(entry: str, place: Place, budget: Budget, allow: tuple[str, ...], warnings: list[str]) -> list[Found]:
    path = _absolute(entry, place)
    parts = path.parts
    magic = next((i for i, part in enumerate(parts) if _MAGIC.search(part)), None)
    # ``..`` resolved by name, so the walk and its ignore rules see where the directory really sits.
    base = Path(os.path.normpath(path if magic is None else Path(*parts[:magic])))
    _warn_if_outside(entry, base, place, warnings)
    if magic is None and not path.is_dir():
        if not path.is_file():
            raise InvalidRequestError(f"files: {entry!r} is not a file or directory ({place.shown(path)})")
        _check_confined(entry, path, place)
        return [Found(path, place.shown(path), explicit=True)]
    if not base.is_dir():
        warnings.append(f"files: {entry!r} matched no file")
        return []
    _check_confined(entry, base, place)
    _refuse_named_store(entry, base, place, allow)
    if magic is None:
        pattern, depth = compiled("**"), None
    else:
        rest = "/".join(parts[magic:])
        pattern, depth = compiled(rest), None if "**" in rest else len(parts) - magic
    walked = walk(
        entry,
        base,
        pattern,
        depth=depth,
        workspace=place.workspace,
        budget=budget,
        screen=functools.partial(_screen, place=place, allow=allow, home=Path.home()),
    )
    warnings.extend(_left_out_warnings(entry, walked, place))
    if walked.ignored_base:
        warnings.append(f"files: {entry!r} is ignored (.gitignore or built-in rules): name its files to read them")
    elif not walked.files:
        warnings.append(f"files: {entry!r} matched no file")
    if len(walked.files) > MAX_GLOB_FILES:
        raise InvalidRequestError(
            f"files: {entry!r} matches more than {MAX_GLOB_FILES} files (the limit for one glob); narrow the pattern"
        )
    for file in walked.files:
        _check_confined(entry, file, place)
    return [Found(file, place.shown(file), explicit=False) for file in walked.files]


def _absolute(entry: str, place: Place) -> Path:
    if place.confined_to is not None:
        if entry.startswith("~") or ".." in Path(entry).parts:
            raise InvalidRequestError(f"files: {entry!r} leaves COLIBRI_HTTP_FILES_ROOT (no `~` or `..` over HTTP)")
        path = Path(entry)
        if path.is_absolute() and not path.is_relative_to(place.confined_to):
            raise InvalidRequestError(f"files: {entry!r} is outside COLIBRI_HTTP_FILES_ROOT")
        return place.workspace / path
    return place.workspace / Path(entry).expanduser()  # an absolute path replaces the workspace


def _warn_if_outside(entry: str, path: Path, place: Place, warnings: list[str]) -> None:
    """Over stdio a path may lead anywhere on the user's own disk; say so when it leaves the
    workspace (``/etc/hosts``, ``../x``, ``~/notes``), so the user sees what was read."""
    if place.confined_to is None and not Path(os.path.normpath(path)).is_relative_to(place.workspace):
        warnings.append(f"files: {entry!r} is outside the workspace ({place.workspace})")


def _refuse_named_store(entry: str, base: Path, place: Place, allow: tuple[str, ...]) -> None:
    """A directory named (or a glob's directory) inside a credential store is refused outright."""
    shown = place.shown(base)
    store = None if allowed(base, shown, allow) else credential_store(base, directory=True)
    if store is not None:
        raise InvalidRequestError(
            f"files: {entry!r} looks like a secret ({store}) and is not sent; "
            "name it in COLIBRI_FILES_ALLOW to allow it"
        )


def _screen(path: Path, directory: bool, *, place: Place, allow: tuple[str, ...], home: Path) -> str | None:
    """Why a walk leaves ``path`` out before reading it: the home directory's hidden entries, and
    directories that are credential stores (files are checked when read, by name and content)."""
    if allow and allowed(path, place.shown(path), allow):
        return None
    if hidden_in_home(path, home):
        return HIDDEN_IN_HOME
    store = credential_store(path, directory=True, through_links=False) if directory else None
    return None if store is None else f"looks like a secret ({store})"


def _left_out_warnings(entry: str, walked: Walked, place: Place) -> list[str]:
    hidden = sum(1 for _, reason in walked.left_out if reason == HIDDEN_IN_HOME)
    warnings = [
        f"files: {place.shown(path)}{'/' if path.is_dir() else ''} {reason}: left out"
        for path, reason in walked.left_out
        if reason != HIDDEN_IN_HOME
    ]
    if hidden:
        warnings.append(
            f"files: {entry!r} left out {hidden} hidden files and folders of the home directory (name one to read it)"
        )
    return warnings


def _check_confined(entry: str, path: Path, place: Place) -> None:
    root = place.confined_to
    if root is not None and not Path(os.path.realpath(path)).is_relative_to(root):
        raise InvalidRequestError(f"files: {entry!r} leads outside COLIBRI_HTTP_FILES_ROOT (through a symlink)")
