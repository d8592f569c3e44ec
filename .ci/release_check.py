"""Release gate: the tag being released names the version every release file carries.

Run by .github/workflows/release.yml before anything is built or published, and by the test suite:

    python .ci/release_check.py v0.1.0 [--notes FILE]

Checks that the tag is ``v`` + pyproject.toml's ``version`` (the one place the version is written),
that server.json's ``version`` and its package's ``version`` are the same, and that CHANGELOG.md has
a dated section for it; ``--notes`` writes that section's text (the release notes) to FILE. Exits 1
naming every disagreement. Standard library only, so any Python 3.11+ runs it before ``uv sync``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Keep a Changelog's heading of a released version: "## [0.1.0] - 2026-11-26".
_SECTION = re.compile(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\d{4}-\d{2}-\d{2})[ \t]*$", re.MULTILINE)
_ANY_SECTION = re.compile(r"^## ", re.MULTILINE)


def package_version(root: Path = ROOT) -> str:
    version: str = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    return version


def release_notes(changelog: str, version: str) -> str | None:
    """The text under CHANGELOG.md's dated heading for ``version`` (up to the next section), or None."""
    for match in _SECTION.finditer(changelog):
        if match.group("version") == version:
            following = _ANY_SECTION.search(changelog, match.end())
            end = following.start() if following else len(changelog)
            # Link reference definitions ("[0.1.0]: https://...") close the file; they are not notes.
            body = re.sub(r"^\[[^\]]+\]: \S+\s*$", "", changelog[match.end() : end], flags=re.MULTILINE)
            return body.strip() + "\n"
    return None


def problems(tag: str, root: Path = ROOT) -> list[str]:
    """Every way the release files disagree with ``tag``; empty when they agree."""
    version = package_version(root)
    found = []
    if tag != f"v{version}":
        found.append(f"tag {tag!r} is not 'v' + pyproject.toml's version {version!r}")
    server = json.loads((root / "server.json").read_text(encoding="utf-8"))
    if server.get("version") != version:
        found.append(f"server.json's version {server.get('version')!r} is not {version!r}")
    for package in server.get("packages", []):
        if package.get("version") != version:
            name, given = package.get("identifier"), package.get("version")
            found.append(f"server.json's {name!r} package version {given!r} is not {version!r}")
    if release_notes((root / "CHANGELOG.md").read_text(encoding="utf-8"), version) is None:
        found.append(f"CHANGELOG.md has no '## [{version}] - YYYY-MM-DD' section")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag", help="the tag being released, e.g. v0.1.0")
    parser.add_argument("--notes", type=Path, help="write the version's CHANGELOG section to this file")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this script's)")
    args = parser.parse_args(argv)
    found = problems(args.tag, args.root)
    for problem in found:
        sys.stderr.write(f"release check: {problem}\n")
    if found:
        return 1
    version = package_version(args.root)
    if args.notes:
        notes = release_notes((args.root / "CHANGELOG.md").read_text(encoding="utf-8"), version)
        args.notes.write_text(notes or "", encoding="utf-8")
    sys.stderr.write(f"release check: {args.tag} is colibri-router {version} everywhere\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
