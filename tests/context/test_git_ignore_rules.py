"""`files` globs and directories read what git lists: every .gitignore, .git/info/exclude and the
global excludes file, negations, directory-only rules, git's wildmatch; checked against
`git ls-files --cached --others --exclude-standard` itself, on fixed trees and hypothesis-made ones."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri_router.context import gather
from colibri_router.context.gitignore import RuleList, parse
from colibri_router.context.ignore import BUILTIN_IGNORES
from colibri_router.settings import load_settings

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed: nothing to compare with")


def write(root: Path, relative: str, content: str = "x\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


@contextmanager
def repository(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh git repository as the workspace, with its own HOME and XDG_CONFIG_HOME (so the
    global excludes file is the test's), for us and for git alike."""
    with tempfile.TemporaryDirectory() as temporary:
        top = Path(temporary)
        root, home = top / "repo", top / "home"
        root.mkdir()
        home.mkdir()
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        monkeypatch.setenv("COLIBRI_WORKSPACE", str(root))
        monkeypatch.setenv("COLIBRI_FILES_MAX_ENTRIES", "100000")
        subprocess.run([GIT or "git", "init", "-q", str(root)], check=True)
        yield root


def git_lists(root: Path, *paths: str) -> set[str]:
    done = subprocess.run(
        [GIT or "git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", *paths],
        cwd=root,
        capture_output=True,
        check=True,
    )
    return {name.decode() for name in done.stdout.split(b"\0") if name}


def we_read(*entries: str) -> set[str]:
    return {file.path for file in gather(list(entries), load_settings()).files}


# -- fixed trees ---------------------------------------------------------------------------------------


@needs_git
def test_nested_gitignores_info_exclude_and_the_global_file_all_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        for name in (
            "app.py", "instance/config.py", "src/keep.log", "src/drop.log", "src/deep/drop.log",
            "src/deep/notes.tmp", "docs/a.md", "docs/draft.md", "build/out.js", "local.cfg", "x.bak",
        ):  # fmt: skip
            write(root, name)
        write(root, ".gitignore", "*.log\nbuild/\n")
        write(root, "instance/.gitignore", "*\n")  # the Flask tutorial's instance folder
        write(root, "src/.gitignore", "!keep.log\n")
        write(root, "docs/.gitignore", "draft.md\n")
        write(root, ".git/info/exclude", "local.cfg\n")
        write(root.parent / "home", ".config/git/ignore", "*.bak\n*.tmp\n")
        expected = {"app.py", ".gitignore", "src/.gitignore", "src/keep.log", "docs/.gitignore", "docs/a.md"}
        assert git_lists(root) == expected
        assert we_read("**/*") == expected
        assert we_read(".") == expected
        assert we_read("src") == git_lists(root, "src") == {"src/.gitignore", "src/keep.log"}


@needs_git
def test_core_excludes_file_from_git_config_replaces_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        home = root.parent / "home"
        write(home, "my-ignores", "*.secret-ish\n")
        write(home, ".config/git/ignore", "*.md\n")  # not read once core.excludesFile is set
        write(home, ".gitconfig", "[core]\n\texcludesFile = ~/my-ignores\n")
        write(root, "a.secret-ish")
        write(root, "b.md")
        assert git_lists(root) == we_read("**/*") == {"b.md"}


@needs_git
def test_a_repository_s_own_core_excludes_file_counts_for_that_repository_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with repository(monkeypatch) as root:
        other = root.parent / "other"
        subprocess.run([GIT or "git", "init", "-q", str(other)], check=True)
        write(root.parent, "repo-ignores", "*.gen\n")
        subprocess.run(
            [GIT or "git", "config", "core.excludesFile", str(root.parent / "repo-ignores")], cwd=root, check=True
        )
        for directory in (root, other):
            write(directory, "a.gen")
            write(directory, "b.py")
        assert git_lists(root) == we_read("**/*") == {"b.py"}
        assert git_lists(other) == {"a.gen", "b.py"}
        assert we_read(f"{other}/**/*") == {str(other / "a.gen"), str(other / "b.py")}


@needs_git
def test_the_go_allow_list_reads_nested_go_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """`*`, `!*/`, `!*.go`: git re-includes every directory, then only .go files in them."""
    with repository(monkeypatch) as root:
        write(root, ".gitignore", "*\n!*/\n!*.go\n")
        for name in ("main.go", "README.md", "pkg/util.go", "pkg/util_test.txt", "pkg/sub/deep.go"):
            write(root, name)
        expected = {"main.go", "pkg/util.go", "pkg/sub/deep.go"}
        assert git_lists(root) == we_read("**/*") == we_read(".") == expected


@needs_git
def test_a_negation_cannot_reach_into_an_ignored_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        write(root, ".gitignore", "logs/\n!logs/keep.txt\n")
        write(root, "logs/keep.txt")
        write(root, "other.txt")
        assert git_lists(root) == we_read("**/*") == {".gitignore", "other.txt"}


@needs_git
def test_a_deeper_gitignore_overrides_a_shallower_one(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        write(root, ".gitignore", "*.gen\n")
        write(root, "a/.gitignore", "!*.gen\n")
        write(root, "a/b/.gitignore", "x.gen\n")
        for name in ("top.gen", "a/one.gen", "a/b/x.gen", "a/b/y.gen"):
            write(root, name)
        expected = {".gitignore", "a/.gitignore", "a/b/.gitignore", "a/one.gen", "a/b/y.gen"}
        assert git_lists(root) == we_read("**/*") == expected


@needs_git
def test_info_exclude_is_beneath_every_gitignore_and_above_the_global_file(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        write(root.parent / "home", ".config/git/ignore", "*.a\n*.b\n")
        write(root, ".git/info/exclude", "!*.a\n*.c\n")
        write(root, ".gitignore", "!*.c\n")
        for name in ("f.a", "f.b", "f.c"):
            write(root, name)
        assert git_lists(root) == we_read("**/*") == {".gitignore", "f.a", "f.c"}


@needs_git
def test_negated_classes_with_a_caret_or_a_bang_in_rules_and_globs(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        write(root, ".gitignore", "[^a]*.txt\n")
        for name in ("a1.txt", "b1.txt", "c1.txt", "x.py", "y.py"):
            write(root, name)
        assert git_lists(root) == we_read("**/*") == {".gitignore", "a1.txt", "x.py", "y.py"}
        assert we_read("[^x].py") == we_read("[!x].py") == {"y.py"}


@needs_git
def test_anchored_directory_only_and_double_star_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        write(root, ".gitignore", "/top.txt\nout/\n**/cache/**\na/**/z.txt\ndoc/*.md\n")
        for name in (
            "top.txt", "sub/top.txt", "out/a.txt", "sub/out/b.txt", "sub/out.txt", "x/cache/y/z.txt",
            "a/z.txt", "a/b/c/z.txt", "doc/r.md", "doc/sub/r.md",
        ):  # fmt: skip
            write(root, name)
        expected = {".gitignore", "sub/top.txt", "sub/out.txt", "doc/sub/r.md"}
        assert git_lists(root) == we_read("**/*") == expected


@needs_git
def test_a_directory_under_an_ignored_directory_reads_nothing_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        write(root, ".gitignore", "dist/\n")
        write(root, "dist/app/main.js")
        reading = gather(["dist/app"], load_settings())
        assert reading.files == [] and git_lists(root, "dist/app") == set()
        assert reading.warnings == [
            "files: 'dist/app' is ignored (.gitignore or built-in rules): name its files to read them"
        ]
        assert [f.path for f in gather(["dist/app/main.js"], load_settings()).files] == ["dist/app/main.js"]


@needs_git
def test_a_repository_nested_in_a_walk_keeps_its_own_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        write(root, ".gitignore", "*.txt\n")
        inner = root / "vendor" / "lib"
        subprocess.run([GIT or "git", "init", "-q", str(inner)], check=True)
        write(inner, ".gitignore", "*.md\n")
        write(inner, "notes.txt")
        write(inner, "readme.md")
        write(inner, ".git/info/exclude", "local.py\n")
        write(inner, "local.py")
        assert we_read("vendor") == {"vendor/lib/.gitignore", "vendor/lib/notes.txt"}
        assert git_lists(inner) == {".gitignore", "notes.txt"}


@needs_git
def test_a_worktree_reads_the_common_info_exclude(monkeypatch: pytest.MonkeyPatch) -> None:
    with repository(monkeypatch) as root:
        git = GIT or "git"
        subprocess.run(
            [git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"],
            cwd=root,
            check=True,
        )
        worktree = root.parent / "worktree"
        subprocess.run([git, "worktree", "add", "-q", str(worktree)], cwd=root, check=True, capture_output=True)
        write(root, ".git/info/exclude", "*.x\n")
        write(worktree, "a.x")
        write(worktree, "b.y")
        monkeypatch.setenv("COLIBRI_WORKSPACE", str(worktree))
        assert git_lists(worktree) == we_read(".") == {"b.y"}


def test_without_a_repository_the_workspace_gitignore_still_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path / "project"))
    write(tmp_path, "project/.gitignore", "*.log\n")
    write(tmp_path, "project/sub/.gitignore", "!keep.log\n")
    for name in ("project/a.log", "project/sub/keep.log", "project/sub/b.log", "project/c.py"):
        write(tmp_path, name)
    assert we_read("**/*") == {".gitignore", "sub/.gitignore", "sub/keep.log", "c.py"}


# -- the rule reader on its own (no git needed) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "path", "directory", "expected"),
    [
        (["# comment", "", "a"], b"a", False, True),
        (["\\#a"], b"#a", False, True),
        (["\\!a"], b"!a", False, True),
        (["a  "], b"a", False, True),  # trailing spaces go
        (["a\\ "], b"a ", False, True),  # unless escaped
        (["a/"], b"a", False, None),  # directory-only
        (["a/"], b"x/a", True, True),
        (["/a"], b"x/a", False, None),  # anchored
        (["x/a"], b"y/x/a", False, None),  # a slash anchors too
        (["*", "!a"], b"a", False, False),
        (["!a", "*"], b"a", False, True),  # the last match decides
        (["[a"], b"[a", False, None),  # an open class matches nothing
        (["a\\"], b"a", False, None),  # a trailing backslash matches nothing
        (["**"], b"x/y", False, True),
        (["a/**"], b"a", True, None),
        (["a/**"], b"a/b/c", False, True),
    ],
)
def test_rule_lines_are_read_as_git_reads_them(
    lines: list[str], path: bytes, directory: bool, expected: bool | None
) -> None:
    assert RuleList(parse("\n".join(lines))).decide(path, directory=directory) is expected


def test_crlf_and_a_byte_order_mark_are_read_as_git_reads_them() -> None:
    rules = RuleList(parse("\ufeffa.txt\r\nb.txt\r\n"))
    assert rules.decide(b"a.txt", directory=False) is True
    assert rules.decide(b"b.txt", directory=False) is True


def test_rules_of_a_subdirectory_apply_only_below_it() -> None:
    rules = RuleList(parse("/x\n"), b"sub")
    assert rules.decide(b"sub/x", directory=False) is True
    assert rules.decide(b"x", directory=False) is None
    assert rules.decide(b"sub/y/x", directory=False) is None


# -- hypothesis: random trees and rules against git itself ---------------------------------------------

NAMES = ["a", "b", "c.go", "d.txt", ".h", "e f", "A]", "é"]
PIECES = [
    "a", "b", "c.go", "*", "?", "*.go", "*.txt", "[ab]", "[!a]*", "[^b]", "**", ".h", "e\\ f", "d*", "[a-c]*",
    "[[:alpha:]]", "***", "c**", "**.go", "[]a]*", "A\\]", "?]", "[^[:lower:]]*", "??",
]  # fmt: skip


def patterns() -> st.SearchStrategy[str]:
    body = st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("/".join)
    return st.tuples(st.booleans(), st.booleans(), body, st.booleans()).map(
        lambda t: ("!" if t[0] else "") + ("/" if t[1] else "") + t[2] + ("/" if t[3] else "")
    )


def trees() -> st.SearchStrategy[list[tuple[str, ...]]]:
    return st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map(tuple), min_size=1, max_size=12)


def consistent(paths: list[tuple[str, ...]]) -> list[str]:
    """Paths as files, dropping any that would need a file to be a directory or the reverse."""
    files: list[str] = []
    directories: set[tuple[str, ...]] = set()
    taken: set[tuple[str, ...]] = set()
    for parts in paths:
        prefixes = {parts[:i] for i in range(1, len(parts))}
        if parts in directories or parts in taken or prefixes & taken:
            continue
        taken.add(parts)
        directories |= prefixes
        files.append("/".join(parts))
    return files


@needs_git
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tree=trees(),
    root_rules=st.lists(patterns(), max_size=5),
    nested_rules=st.lists(st.tuples(st.sampled_from(["a", "b", "a/b"]), st.lists(patterns(), max_size=3)), max_size=3),
    exclude_rules=st.lists(patterns(), max_size=2),
    global_rules=st.lists(patterns(), max_size=2),
)
def test_random_trees_and_rules_read_what_git_lists(
    monkeypatch: pytest.MonkeyPatch,
    tree: list[tuple[str, ...]],
    root_rules: list[str],
    nested_rules: list[tuple[str, list[str]]],
    exclude_rules: list[str],
    global_rules: list[str],
) -> None:
    with repository(monkeypatch) as root:
        for name in consistent(tree):
            write(root, name)
        write(root, ".gitignore", "".join(rule + "\n" for rule in root_rules))
        for directory, rules in nested_rules:
            if (root / directory).is_dir():
                write(root, f"{directory}/.gitignore", "".join(rule + "\n" for rule in rules))
        write(root, ".git/info/exclude", "".join(rule + "\n" for rule in exclude_rules))
        write(root.parent / "home", ".config/git/ignore", "".join(rule + "\n" for rule in global_rules))
        listed = git_lists(root)
        assert we_read("**/*") == listed
        assert we_read(".") == listed
        if (root / "a").is_dir():
            assert we_read("a") == git_lists(root, "a")


def test_no_builtin_name_can_appear_in_the_generated_trees() -> None:
    """The hypothesis trees compare our reading with git's; the built-in list must not touch them."""
    builtin = RuleList(parse("\n".join(BUILTIN_IGNORES)))
    for name in NAMES:
        assert builtin.decide(name.encode(), directory=False) is None
        assert builtin.decide(name.encode(), directory=True) is None
