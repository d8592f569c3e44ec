"""Walks are bounded and careful: entries and time per call (COLIBRI_FILES_MAX_ENTRIES,
COLIBRI_FILES_MAX_SECONDS), no deeper than the pattern reaches, no FIFO or symlinked directory,
lock files of every ecosystem left out; over stdio a path outside the workspace is said."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from colibri_router.context import gather
from colibri_router.errors import InvalidRequestError
from colibri_router.settings import load_settings


def write(root: Path, relative: str, content: str = "x\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


def paths(entries: list[str]) -> list[str]:
    return [file.path for file in gather(entries, load_settings()).files]


def test_a_walk_seeing_more_entries_than_the_limit_is_refused_naming_it_and_the_limit(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        write(workspace, f"many/d{i}/f.txt")
    monkeypatch.setenv("COLIBRI_FILES_MAX_ENTRIES", "60")
    assert len(paths(["many"])) == 30  # 30 directories and 30 files: 60 entries
    monkeypatch.setenv("COLIBRI_FILES_MAX_ENTRIES", "59")
    with pytest.raises(
        InvalidRequestError, match=r"'many' visits more than 59 files and directories \(COLIBRI_FILES_MAX_ENTRIES"
    ):
        gather(["many"], load_settings())


def test_the_entry_limit_is_for_all_entries_of_a_call(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(10):
        write(workspace, f"a/{i}.txt")
        write(workspace, f"b/{i}.txt")
    monkeypatch.setenv("COLIBRI_FILES_MAX_ENTRIES", "15")
    assert len(paths(["a"])) == 10
    with pytest.raises(InvalidRequestError, match=r"'b' visits more than 15"):
        gather(["a", "b"], load_settings())


def test_ignored_entries_count_but_ignored_directories_are_not_entered(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(50):
        write(workspace, f"node_modules/pkg{i}/index.js")
    write(workspace, "src/app.js")
    monkeypatch.setenv("COLIBRI_FILES_MAX_ENTRIES", "5")
    assert paths(["**/*.js"]) == ["src/app.js"]


def test_a_walk_over_the_time_limit_is_refused_naming_it_and_the_limit(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace, "src/a.py")
    monkeypatch.setenv("COLIBRI_FILES_MAX_SECONDS", "0.000000001")
    with pytest.raises(InvalidRequestError, match=r"'src' took more than 1e-09 s to walk \(COLIBRI_FILES_MAX_SECONDS"):
        gather(["src"], load_settings())
    assert paths(["src/a.py"]) == ["src/a.py"]  # a file named needs no walk


@pytest.mark.parametrize("entry", ["/", "/**/*.conf"])
def test_the_whole_disk_stops_at_the_limit(workspace: Path, monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    monkeypatch.setenv("COLIBRI_FILES_MAX_ENTRIES", "200")
    with pytest.raises(InvalidRequestError, match=re.escape(f"'{entry}' visits more than 200")):
        gather([entry], load_settings())


def test_a_glob_without_double_star_goes_no_deeper_than_it_can_match(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(40):
        write(workspace, f"deep/{i}/x/y.py")
    write(workspace, "top.py")
    write(workspace, "deep/mid.py")
    monkeypatch.setenv("COLIBRI_FILES_MAX_ENTRIES", "50")  # */*.py sees 43 entries, **/*.py 163
    assert paths(["*.py"]) == ["top.py"]
    assert paths(["*/*.py"]) == ["deep/mid.py"]
    with pytest.raises(InvalidRequestError, match="visits more than 50"):
        gather(["**/*.py"], load_settings())


def test_fifos_are_never_opened_and_symlinked_directories_never_followed(workspace: Path, tmp_path: Path) -> None:
    write(workspace, "dir/a.txt")
    os.mkfifo(workspace / "dir/pipe")
    os.symlink(workspace / "dir", workspace / "dir/loop")
    write(tmp_path, "outside/b.txt")
    os.symlink(tmp_path / "outside", workspace / "dir/out")
    os.symlink(tmp_path / "missing", workspace / "dir/dangling.txt")
    reading = gather(["dir"], load_settings())
    assert [f.path for f in reading.files] == ["dir/a.txt"]
    assert reading.warnings == []


@pytest.mark.parametrize(
    "name",
    [
        "packages.lock.json", "gradle.lockfile", "buildscript-gradle.lockfile", "Package.resolved", "pubspec.lock",
        "mix.lock", "Podfile.lock", "composer.lock", "flake.lock", "bun.lockb", "bun.lock", "deno.lock",
        "Cartfile.resolved", ".terraform.lock.hcl", "cabal.project.freeze", "Cargo.lock", "Gemfile.lock",
        "poetry.lock", "uv.lock", "yarn.lock", "pnpm-lock.yaml", "package-lock.json", "npm-shrinkwrap.json",
        "MODULE.bazel.lock", "renv.lock", "stack.yaml.lock", "conan.lock", "pixi.lock",
    ],
)  # fmt: skip
def test_lock_files_of_every_ecosystem_are_left_out_of_walks(workspace: Path, name: str) -> None:
    write(workspace, f"app/{name}")
    write(workspace, "app/go.sum")  # a checksum list, not a lock file
    write(workspace, "app/main.go")
    assert paths(["app"]) == ["app/go.sum", "app/main.go"]
    assert paths([f"app/{name}"]) == [f"app/{name}"]


def test_over_stdio_a_path_outside_the_workspace_is_read_with_a_warning(workspace: Path, tmp_path: Path) -> None:
    write(tmp_path, "other/notes.txt")
    write(workspace, "inside.txt")
    reading = gather(
        ["../other/notes.txt", str(tmp_path / "other/*.txt"), "inside.txt", "./inside.txt"], load_settings()
    )
    assert [f.path for f in reading.files] == ["../other/notes.txt", "inside.txt"]
    assert reading.warnings == [
        f"files: '../other/notes.txt' is outside the workspace ({workspace})",
        f"files: '{tmp_path / 'other/*.txt'}' is outside the workspace ({workspace})",
    ]


def test_over_http_paths_stay_confined_and_no_outside_warning_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "served"
    write(root, "a.txt")
    monkeypatch.setenv("COLIBRI_HTTP_FILES_ROOT", str(root))
    reading = gather(["a.txt", "*.txt"], load_settings(), over_http=True)
    assert [f.path for f in reading.files] == ["a.txt"] and reading.warnings == []
    with pytest.raises(InvalidRequestError, match="leaves COLIBRI_HTTP_FILES_ROOT"):
        gather(["../x.txt"], load_settings(), over_http=True)


def test_a_large_file_in_a_directory_is_left_out_and_named_explicitly_is_refused(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace, "img/logo.svg", "<svg>" + "x" * 200 + "</svg>\n")
    write(workspace, "img/small.svg", "<svg/>\n")
    monkeypatch.setenv("COLIBRI_FILE_MAX_BYTES", "100")
    reading = gather(["img"], load_settings())
    assert [f.path for f in reading.files] == ["img/small.svg"]
    assert reading.warnings == ["files: img/logo.svg is over COLIBRI_FILE_MAX_BYTES (212 bytes): left out"]
    with pytest.raises(InvalidRequestError, match=r"'img/logo.svg' is 212 bytes, over the limit of 100"):
        gather(["img/logo.svg"], load_settings())


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("[^a].txt", ["b.txt", "c.txt"]),
        ("[!a].txt", ["b.txt", "c.txt"]),
        ("[a-b].txt", ["a.txt", "b.txt"]),
        ("[[:alpha:]].txt", ["a.txt", "b.txt", "c.txt"]),
        ("?.txt", ["a.txt", "b.txt", "c.txt"]),
        ("**/[^a].txt", ["b.txt", "c.txt", "sub/b.txt"]),
        ("sub/**", ["sub/b.txt"]),
    ],
)
def test_files_globs_are_git_wildmatch(workspace: Path, glob: str, expected: list[str]) -> None:
    for name in ("a.txt", "b.txt", "c.txt", "sub/b.txt"):
        write(workspace, name)
    assert paths([glob]) == expected


def test_a_directory_named_inside_a_builtin_ignored_one_is_read(workspace: Path) -> None:
    write(workspace, "node_modules/left-pad/index.js")
    write(workspace, "node_modules/left-pad/node_modules/dep/x.js")
    assert paths(["node_modules/left-pad"]) == ["node_modules/left-pad/index.js"]
    assert paths(["**/*.js"]) == []


def test_a_walk_through_dot_dot_uses_the_rules_of_where_it_lands(workspace: Path, tmp_path: Path) -> None:
    write(tmp_path, "sibling/.gitignore", "*.log\n")
    write(tmp_path, "sibling/a.py")
    write(tmp_path, "sibling/b.log")
    reading = gather(["../sibling"], load_settings())
    assert [f.path for f in reading.files] == [str(tmp_path / "sibling/.gitignore"), str(tmp_path / "sibling/a.py")]
    assert reading.warnings == [f"files: '../sibling' is outside the workspace ({workspace})"]


def test_entries_no_disk_can_hold_are_invalid_requests_or_match_nothing(workspace: Path) -> None:
    write(workspace, "a.txt")
    for entry in ("x\ud800.txt", "nul\x00.txt"):
        with pytest.raises(InvalidRequestError, match="is not a file or directory"):
            gather([entry], load_settings())
    reading = gather(["x\ud800*.txt", "\ud800/*"], load_settings())
    assert reading.files == []
    assert reading.warnings == ["files: 'x\\ud800*.txt' matched no file", "files: '\\ud800/*' matched no file"]
