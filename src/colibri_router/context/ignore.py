"""Which files a glob or a directory leaves out: git's ignore rules, read from every place git reads
them, and a built-in list.

git's order of precedence, highest first (``gitignore(5)``): the ``.gitignore`` of the path's own
directory, then each parent's up to the repository's top, then ``.git/info/exclude``, then the
user's global file (``core.excludesFile``, else ``$XDG_CONFIG_HOME/git/ignore``, else
``~/.config/git/ignore``). In each, the last matching pattern decides (:mod:`.gitignore`). A
directory that is ignored is not entered, so nothing under it can be re-included, as in git.

Outside a repository the same files are read from the workspace (when the walk is inside it) or
from where the walk starts, and the global file still applies: it is the user's own list of what
never matters. A repository nested in the walk (a directory holding ``.git``) starts its own rules.
The built-in list (version control, dependencies, caches, lock files) is left out everywhere and
cannot be re-included. A file named explicitly is always read: these rules apply to walks only.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from colibri_router.context.gitignore import RuleList, parse

# Lock files: generated, long, and never what a reviewer wants. Sources: GitHub Linguist's
# generated.rb (Cargo.lock, composer.lock, deno.lock, flake.lock, MODULE.bazel.lock, Gopkg.lock,
# glide.lock, Package.resolved, poetry.lock, pdm.lock, uv.lock, pixi.lock, esy.lock,
# npm-shrinkwrap.json, package-lock.json, pnpm-lock.yaml, Pipfile.lock, .terraform.lock.hcl);
# OSV-Scanner's supported lockfiles (conan.lock, pubspec.lock, mix.lock, gradle.lockfile,
# buildscript-gradle.lockfile, Gemfile.lock, renv.lock, NuGet packages.lock.json, stack.yaml.lock,
# cabal.project.freeze); Bun's docs (bun.lock, bun.lockb); CocoaPods (Podfile.lock); Carthage
# (Cartfile.resolved); Yarn (yarn.lock). `*.lock` covers most of them. go.sum is a checksum list,
# not a lock file, and is read.
LOCK_FILES = (
    "*.lock",
    "*.lockb",
    "*.lockfile",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "packages.lock.json",
    "Package.resolved",
    "Cartfile.resolved",
    ".terraform.lock.hcl",
    "cabal.project.freeze",
)
BUILTIN_IGNORES = (".git", "node_modules/", "__pycache__/", ".venv/", *LOCK_FILES)

GIT_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class Frame:
    """The rules in force inside one directory: ``here`` relative to ``root`` (the repository's top,
    or where the rules start), and the rule lists, highest precedence first."""

    root: Path
    here: bytes
    lists: tuple[RuleList, ...]

    def relative(self, name: str) -> bytes:
        encoded = os.fsencode(name)
        return self.here + b"/" + encoded if self.here else encoded

    def ignored(self, name: str, *, directory: bool, builtin: bool = True) -> bool:
        """Whether the entry ``name`` of this directory is left out (built-ins first, then git's rules)."""
        if builtin and _builtin().decide(os.fsencode(name), directory=directory):
            return True
        relative = self.relative(name)
        for rules in self.lists:
            decided = rules.decide(relative, directory=directory)
            if decided is not None:
                return decided
        return False

    def enter(self, directory: Path, name: str, names: Collection[str]) -> Frame:
        """The frame inside ``directory`` (this frame's entry ``name``), whose entries are ``names``."""
        if ".git" in names:
            return repository_frame(directory, names)
        here = self.relative(name)
        own = gitignore_of(directory, here) if ".gitignore" in names else None
        return Frame(self.root, here, self.lists if own is None else (own, *self.lists))


def repository_frame(top: Path, names: Collection[str]) -> Frame:
    """The frame at a repository's top: its ``.gitignore``, ``info/exclude`` and the global file."""
    lists = [_global_rules(top), *_info_exclude(top)]
    if ".gitignore" in names:
        own = gitignore_of(top, b"")
        if own is not None:
            lists.append(own)
    return Frame(top, b"", tuple(reversed(lists)))


def frame_above(base: Path, workspace: Path) -> tuple[Frame, str] | None:
    """The frame of ``base``'s parent and ``base``'s name in it, for a walk from ``base``; None when
    git's rules ignore ``base`` or a directory above it (git lists nothing there). The built-in list
    applies below ``base`` only: ``node_modules/left-pad`` named is read."""
    top = _repository_top(base)
    root = top or (workspace if base.is_relative_to(workspace) else base)
    frame = Frame(root, b"", (_global_rules(root),))  # entering the root adds the rest
    if base == root:
        return frame, ""
    frame = frame.enter(root, "", _names(root))
    parts = base.relative_to(root).parts
    directory = root
    for part in parts[:-1]:
        if frame.ignored(part, directory=True, builtin=False):
            return None
        directory = directory / part
        frame = frame.enter(directory, part, _names(directory))
    return None if frame.ignored(parts[-1], directory=True, builtin=False) else (frame, parts[-1])


def _names(directory: Path) -> set[str]:
    return {name for name in (".git", ".gitignore") if os.path.lexists(directory / name)}


def _repository_top(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def gitignore_of(directory: Path, here: bytes) -> RuleList | None:
    """``directory/.gitignore`` as rules for paths below ``here``; git does not follow a symlinked
    ``.gitignore``, and neither do we."""
    path = directory / ".gitignore"
    try:
        status = path.lstat()
    except OSError:
        return None
    if not path.is_file() or path.is_symlink():
        return None
    return _rules_of(str(path), here, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=512)
def _rules_of(path: str, here: bytes, _mtime: int, _size: int) -> RuleList | None:
    try:
        with open(path, "rb") as file:
            text = file.read().decode("utf-8", "surrogateescape")
    except OSError:
        return None
    return RuleList(parse(text), here)


def _read_rules(path: Path) -> RuleList | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return _rules_of(str(path), b"", status.st_mtime_ns, status.st_size)


def _info_exclude(top: Path) -> list[RuleList]:
    rules = _read_rules(_git_dir(top) / "info" / "exclude")
    return [] if rules is None else [rules]


def _git_dir(top: Path) -> Path:
    """The repository's git directory: ``.git``, or where a ``.git`` file (a worktree, a submodule)
    points, and for a worktree the common directory that holds ``info/exclude``. Whatever cannot be
    read leaves ``.git`` itself (then no info/exclude is found, as for a broken repository)."""
    dot_git = top / ".git"
    try:
        if not dot_git.is_file():
            return dot_git
        line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        git_dir = Path(os.path.normpath(top / line.removeprefix("gitdir:").strip()))
        common = git_dir / "commondir"
        if common.is_file():
            return Path(os.path.normpath(git_dir / common.read_text(encoding="utf-8", errors="replace").strip()))
        return git_dir
    except (OSError, ValueError):
        return dot_git


def _global_rules(top: Path) -> RuleList:
    path = global_excludes_file(top)
    rules = _read_rules(path) if path is not None else None
    return rules if rules is not None else _EMPTY


_EMPTY = RuleList([])


def global_excludes_file(top: Path) -> Path | None:
    """``core.excludesFile`` as git reads it from its configuration (asked of git itself, which
    knows includes), else the XDG default git uses. git is asked from inside the repository only
    when the repository's own config or a conditional include could set it; otherwise one answer
    (cached on the config files' stamps) serves every repository a walk meets."""
    user_files = (
        Path(os.environ.get("GIT_CONFIG_GLOBAL") or Path.home() / ".gitconfig"),
        _xdg_config() / "git" / "config",
    )
    repository_config = _git_dir(top) / "config"
    per_repository = _mentions(repository_config, b"excludesfile") or any(
        _mentions(f, b"includeif") for f in user_files
    )
    key = (
        str(top) if per_repository else os.path.abspath(os.sep),
        *(os.environ.get(name, "") for name in ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")),
        *(_stamp(path) for path in (repository_config, *user_files)),
    )
    configured = _configured_excludes_file(key)
    return Path(configured) if configured else _xdg_config() / "git" / "ignore"


def _mentions(path: Path, word: bytes) -> bool:
    try:
        return word in path.read_bytes().lower()
    except OSError:
        return False


def _xdg_config() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else Path.home() / ".config"


def _stamp(path: Path) -> tuple[int, int]:
    try:
        status = path.stat()
    except OSError:
        return (0, 0)
    return (status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=64)
def _configured_excludes_file(key: tuple[object, ...]) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(  # a fixed command, no shell
            [git, "config", "--path", "--get", "core.excludesFile"],
            cwd=str(key[0]) if os.path.isdir(str(key[0])) else None,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip()
    return value if done.returncode == 0 and value else None


@functools.cache
def _builtin() -> RuleList:
    return RuleList(parse("\n".join(BUILTIN_IGNORES)))
