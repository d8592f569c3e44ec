"""router_call's `files`, read from the workspace: globs, ignore rules, limits, secrets, redaction,
binary files, workspace resolution and confinement over HTTP (the context package, no network)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.context import gather
from colibri_router.context.paths import MAX_GLOB_FILES
from colibri_router.context.reading import numbered_block
from colibri_router.errors import InvalidRequestError
from colibri_router.settings import load_settings


def write(root: Path, relative: str, content: str | bytes = "x\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(root))
    return root


def paths(entries: list[str], **kwargs: bool) -> list[str]:
    return [file.path for file in gather(entries, load_settings(), **kwargs).files]


def test_a_file_is_one_block_headed_by_its_path_with_numbered_lines(workspace: Path) -> None:
    write(workspace, "src/app.py", "import os\n\nprint(os.sep)\n")
    reading = gather(["src/app.py"], load_settings())
    [part] = reading.parts
    assert part.text == '\n<file path="src/app.py">\n   1│ import os\n   2│ \n   3│ print(os.sep)\n</file>\n'  # type: ignore[union-attr]
    [file] = reading.files
    assert (file.path, file.bytes) == ("src/app.py", len(b"import os\n\nprint(os.sep)\n"))
    assert file.tokens_estimated == -(-len(part.text) // 4)  # type: ignore[union-attr]
    assert reading.warnings == []


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n\x00"), max_size=20), max_size=30))
def test_numbered_lines_give_back_every_line_in_order(lines: list[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    block = numbered_block("f.txt", text).strip("\n").split("\n")
    assert block[0] == '<file path="f.txt">' and block[-1] == "</file>"
    body = block[1:-1]
    assert [row.split("│ ", 1)[1] for row in body] == lines
    assert [int(row.split("│", 1)[0]) for row in body] == list(range(1, len(lines) + 1))


def test_relative_paths_start_at_the_working_directory_without_a_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "notes.md", "hello\n")
    monkeypatch.chdir(tmp_path)
    assert paths(["notes.md"]) == ["notes.md"]


def test_tilde_is_the_home_directory(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    write(home, "notes/spec.md", "spec\n")
    monkeypatch.setenv("HOME", str(home))
    assert paths(["~/notes/spec.md"]) == [str(home / "notes/spec.md")]


def test_a_workspace_that_is_no_directory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path / "missing"))
    with pytest.raises(InvalidRequestError, match="COLIBRI_WORKSPACE"):
        gather(["a.py"], load_settings())


def test_a_missing_file_is_refused_by_name(workspace: Path) -> None:
    with pytest.raises(InvalidRequestError, match=r"'nope\.py' is not a file"):
        gather(["nope.py"], load_settings())


def test_globs_span_directories_and_honour_gitignore_and_the_builtin_ignores(workspace: Path) -> None:
    for name in (
        "src/a.py", "src/pkg/b.py", "src/pkg/deep/c.py", "src/readme.md", "src/build/gen.py",
        "src/__pycache__/a.py", "node_modules/x/i.py", ".venv/lib/s.py", ".git/hooks/h.py", "src/skip.py",
    ):  # fmt: skip
        write(workspace, name)
    write(workspace, ".gitignore", "build/\nskip.py\n")
    assert paths(["src/**/*.py"]) == ["src/a.py", "src/pkg/b.py", "src/pkg/deep/c.py"]
    assert paths(["**/*.py"]) == ["src/a.py", "src/pkg/b.py", "src/pkg/deep/c.py"]
    assert paths(["src/*.py"]) == ["src/a.py"]
    assert paths(["src/pkg/?.py"]) == ["src/pkg/b.py"]
    assert paths(["src/[ab].py"]) == ["src/a.py"]


def test_a_directory_expands_like_dir_globstar_and_lock_files_are_left_out(workspace: Path) -> None:
    for name in ("lib/a.txt", "lib/sub/b.txt", "lib/uv.lock", "lib/package-lock.json"):
        write(workspace, name)
    assert paths(["lib"]) == ["lib/a.txt", "lib/sub/b.txt"]


def test_a_file_named_explicitly_is_read_even_when_ignored(workspace: Path) -> None:
    write(workspace, ".gitignore", "*.log\n")
    write(workspace, "run.log", "line\n")
    write(workspace, "uv.lock", "lock\n")
    assert paths(["run.log", "uv.lock"]) == ["run.log", "uv.lock"]
    assert paths(["*.log"]) == []


def test_a_file_named_twice_is_sent_once_and_a_glob_matching_nothing_warns(workspace: Path) -> None:
    write(workspace, "a.py")
    reading = gather(["a.py", "*.py", "docs/*.md"], load_settings())
    assert [f.path for f in reading.files] == ["a.py"]
    assert reading.warnings == ["files: 'docs/*.md' matched no file"]


def test_a_glob_matching_more_than_500_files_is_refused(workspace: Path) -> None:
    for i in range(MAX_GLOB_FILES + 1):
        write(workspace, f"many/{i}.txt", "")
    with pytest.raises(InvalidRequestError, match=r"'many/\*' matches more than 500 files"):
        gather(["many/*"], load_settings())


def test_a_file_over_the_byte_limit_is_refused_naming_it_and_the_limit(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace, "big.txt", "y" * 101)
    write(workspace, "small.txt", "y" * 100)
    monkeypatch.setenv("COLIBRI_FILE_MAX_BYTES", "100")
    assert paths(["small.txt"]) == ["small.txt"]
    with pytest.raises(
        InvalidRequestError, match=r"'big.txt' is 101 bytes, over the limit of 100 \(COLIBRI_FILE_MAX_BYTES\)"
    ):
        gather(["big.txt"], load_settings())
    reading = gather(["*.txt"], load_settings())  # in a glob or a directory it is left out, not fatal
    assert [f.path for f in reading.files] == ["small.txt"]
    assert reading.warnings == ["files: big.txt is over COLIBRI_FILE_MAX_BYTES (101 bytes): left out"]


def test_the_default_byte_limit_is_one_megabyte(workspace: Path) -> None:
    write(workspace, "big.txt", "y" * 1_000_001)
    with pytest.raises(InvalidRequestError, match="over the limit of 1000000"):
        gather(["big.txt"], load_settings())


def test_binary_files_are_left_out_with_a_warning(workspace: Path) -> None:
    write(workspace, "data/blob.bin", b"\x00\x01\x02")
    write(workspace, "data/latin1.txt", "caf\xe9".encode("latin-1"))  # text: see test_file_encodings.py
    write(workspace, "data/ok.txt", "fine\n")
    reading = gather(["data"], load_settings())
    assert [f.path for f in reading.files] == ["data/latin1.txt", "data/ok.txt"]
    assert reading.warnings == ["files: data/blob.bin is binary: left out"]


@pytest.mark.parametrize(
    "name", [".env", ".env.local", "server.pem", "tls.KEY", "id_rsa", "id_rsa.pub", "aws_credentials.json"]
)
def test_secret_looking_files_are_refused_when_named(workspace: Path, name: str) -> None:
    write(workspace, name, "value\n")
    with pytest.raises(InvalidRequestError, match=r"looks like a secret.*COLIBRI_FILES_ALLOW"):
        gather([name], load_settings())


def test_secret_looking_files_matched_by_a_glob_are_left_out_with_a_warning(workspace: Path) -> None:
    write(workspace, "conf/.env", "A=1\n")
    write(workspace, "conf/app.toml", "a = 1\n")
    reading = gather(["conf"], load_settings())
    assert [f.path for f in reading.files] == ["conf/app.toml"]
    assert reading.warnings == ["files: conf/.env looks like a secret (environment secrets): left out"]


def test_files_allow_lets_named_secret_files_through(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(workspace, "conf/.env.example", "A=\n")
    write(workspace, "certs/test.pem", "pem\n")
    monkeypatch.setenv("COLIBRI_FILES_ALLOW", "conf/.env.example, *.pem")
    assert paths(["conf/.env.example", "certs"]) == ["conf/.env.example", "certs/test.pem"]


def test_key_shaped_text_is_sent_redacted_with_a_warning(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plainvalue-of-the-openai-key")
    write(workspace, "config.py", 'KEY = "sk-abcdefghijklmnop1234"\nOTHER = "plainvalue-of-the-openai-key"\n')
    reading = gather(["config.py"], load_settings())
    text = reading.parts[0].text  # type: ignore[union-attr]
    assert "sk-abcdefghijklmnop1234" not in text and "plainvalue-of-the-openai-key" not in text
    assert text.count("[redacted]") == 2
    assert reading.warnings == [
        "files: config.py holds key-shaped text (configured API key, openai key), sent as [redacted]"
    ]


# -- over HTTP: the server's disk, confined to COLIBRI_HTTP_FILES_ROOT -----------------------------------


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "served"
    write(root, "src/app.py", "print(1)\n")
    write(tmp_path, "outside/secret.txt", "not yours\n")
    monkeypatch.setenv("COLIBRI_HTTP_FILES_ROOT", str(root))
    return root


def test_over_http_files_are_refused_without_a_files_root(workspace: Path) -> None:
    write(workspace, "a.py")
    with pytest.raises(InvalidRequestError, match="COLIBRI_HTTP_FILES_ROOT"):
        gather(["a.py"], load_settings(), over_http=True)


def test_over_http_files_are_read_inside_the_root(served: Path) -> None:
    assert paths(["src/app.py"], over_http=True) == ["src/app.py"]
    assert paths([str(served / "src/*.py")], over_http=True) == ["src/app.py"]


@pytest.mark.parametrize("entry", ["../outside/secret.txt", "src/../../outside/secret.txt", "~/x.txt"])
def test_over_http_dot_dot_and_home_are_refused(served: Path, entry: str) -> None:
    with pytest.raises(InvalidRequestError, match="leaves COLIBRI_HTTP_FILES_ROOT"):
        gather([entry], load_settings(), over_http=True)


def test_over_http_absolute_paths_outside_the_root_are_refused(served: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError, match="outside COLIBRI_HTTP_FILES_ROOT"):
        gather([str(tmp_path / "outside/secret.txt")], load_settings(), over_http=True)


def test_over_http_symlinks_out_of_the_root_are_refused(served: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside/secret.txt", served / "link.txt")
    os.symlink(tmp_path / "outside", served / "linked_dir")
    for entry in ("link.txt", "*.txt", "linked_dir/secret.txt", "linked_dir"):
        with pytest.raises(InvalidRequestError, match="leads outside COLIBRI_HTTP_FILES_ROOT"):
            gather([entry], load_settings(), over_http=True)


def test_locally_the_same_symlinks_are_followed(workspace: Path, tmp_path: Path) -> None:
    write(tmp_path, "elsewhere/notes.txt", "n\n")
    os.symlink(tmp_path / "elsewhere/notes.txt", workspace / "link.txt")
    assert paths(["link.txt"]) == ["link.txt"]
