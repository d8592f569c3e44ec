"""Credentials never leave the machine through `files`: credential stores by path, private keys by
content, the home directory's hidden files in walks; refused when named, left out with a warning
when a glob or a directory reaches them, unless COLIBRI_FILES_ALLOW names them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.context import gather
from colibri_router.context.credentials import CREDENTIAL_STORES
from colibri_router.context.secrets import credential_store
from colibri_router.errors import InvalidRequestError
from colibri_router.settings import load_settings

OPENSSH_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
SECRET = "hunter2-do-not-send"


def write(root: Path, relative: str, content: str = f"password {SECRET}\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory holding the credential files the issue found sent whole, and a project."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in (
        ".netrc", ".pgpass", ".npmrc", ".pypirc", ".docker/config.json", ".config/gh/hosts.yml",
        ".kube/config", ".aws/credentials", ".aws/config", ".azure/msal_token_cache.json",
        ".config/gcloud/application_default_credentials.json", ".git-credentials",
        ".config/git/credentials", ".password-store/bank.gpg", ".gnupg/private-keys-v1.d/k.key",
        ".bashrc", ".config/app/settings.toml",
    ):  # fmt: skip
        write(home, name)
    write(home, ".ssh/id_ed25519", OPENSSH_KEY)
    write(home, ".ssh/config", "Host x\n")
    write(home, "notes/todo.md", "buy milk\n")
    project = home / "project"
    write(project, "app.py", "print(1)\n")
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(project))
    return home


def read(entries: list[str]) -> tuple[list[str], list[str], str]:
    reading = gather(entries, load_settings())
    text = "".join(getattr(part, "text", "") for part in reading.parts)
    return [file.path for file in reading.files], reading.warnings, text


NAMED = [
    "~/.netrc", "~/.pgpass", "~/.npmrc", "~/.pypirc", "~/.docker/config.json", "~/.config/gh/hosts.yml",
    "~/.kube/config", "~/.ssh/id_ed25519", "~/.ssh/config", "~/.aws/credentials", "~/.aws/config",
    "~/.azure/msal_token_cache.json", "~/.config/gcloud/application_default_credentials.json",
    "~/.git-credentials", "~/.config/git/credentials", "~/.password-store/bank.gpg",
    "~/.gnupg/private-keys-v1.d/k.key",
]  # fmt: skip


@pytest.mark.parametrize("entry", NAMED)
def test_each_credential_store_named_is_refused_saying_why_and_how_to_allow_it(home: Path, entry: str) -> None:
    with pytest.raises(
        InvalidRequestError, match=r"looks like a secret \(.+\) and is not sent; name it in COLIBRI_FILES_ALLOW"
    ):
        gather([entry], load_settings())


@pytest.mark.parametrize("entry", ["~/.ssh", "~/.aws", "~/.ssh/*", "~/.config/gcloud/**/*.json"])
def test_a_credential_directory_named_or_globbed_into_is_refused(home: Path, entry: str) -> None:
    with pytest.raises(InvalidRequestError, match=re.escape(f"{entry!r} looks like a secret")):
        gather([entry], load_settings())


def test_the_home_directory_sends_none_of_its_hidden_files(home: Path) -> None:
    for entry in ("~", "~/**/*"):
        files, warnings, text = read([entry])
        assert files == [str(home / "notes/todo.md"), "app.py"]
        assert SECRET not in text
        assert (
            f"files: {entry!r} left out 14 hidden files and folders of the home directory (name one to read it)"
            in warnings
        )


def test_a_hidden_file_of_the_home_directory_named_explicitly_is_read_unless_a_secret(home: Path) -> None:
    files, _, _ = read(["~/.bashrc"])
    assert files == [str(home / ".bashrc")]


def test_a_walk_above_the_home_directory_leaves_its_hidden_files_and_stores_out(home: Path) -> None:
    files, warnings, text = read([str(home.parent)])
    assert SECRET not in text and "OPENSSH" not in text
    assert files == [str(home / "notes/todo.md"), "app.py"]
    assert any("hidden files and folders of the home directory" in w for w in warnings)


def test_stores_reached_by_a_walk_elsewhere_are_left_out_with_a_warning(home: Path) -> None:
    project = home / "project"
    write(project, "deploy/.aws/credentials")
    write(project, "deploy/.ssh/id_work", OPENSSH_KEY)
    write(project, "deploy/.npmrc")
    write(project, "deploy/run.sh", "echo hi\n")
    files, warnings, text = read(["deploy"])
    assert files == ["deploy/run.sh"]
    assert SECRET not in text
    assert warnings == [
        "files: deploy/.aws/ looks like a secret (AWS credentials): left out",
        "files: deploy/.ssh/ looks like a secret (SSH keys): left out",
        "files: deploy/.npmrc looks like a secret (npm tokens): left out",
    ]


@pytest.mark.parametrize(
    "key",
    [
        OPENSSH_KEY,
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n",
        "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n-----END ENCRYPTED PRIVATE KEY-----\n",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ\n-----END PGP PRIVATE KEY BLOCK-----\n",
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/5\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE\\n"}\n',
        "# created: 2026-01-01\nAGE-SECRET-KEY-1" + "Q" * 58 + "\n",
    ],
)
def test_a_private_key_is_refused_whatever_its_name(home: Path, key: str) -> None:
    project = home / "project"
    write(project, "notes/backup.txt", key)
    write(project, "notes/readme.md", "hello\n")
    with pytest.raises(InvalidRequestError, match=r"'notes/backup.txt' holds a private key and is not sent"):
        gather(["notes/backup.txt"], load_settings())
    files, warnings, text = read(["notes"])
    assert files == ["notes/readme.md"]
    assert warnings == ["files: notes/backup.txt holds a private key: left out"]
    assert key.splitlines()[0] not in text


def test_a_public_key_or_certificate_text_is_not_a_private_key(home: Path) -> None:
    project = home / "project"
    write(project, "docs/cert.txt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    write(project, "docs/ssh.txt", "ssh-ed25519 AAAAC3Nza me@host\n")
    files, warnings, _ = read(["docs"])
    assert files == ["docs/cert.txt", "docs/ssh.txt"] and warnings == []


def test_a_symlink_to_a_credential_file_is_refused(home: Path) -> None:
    os.symlink(home / ".aws/credentials", home / "project/innocent.txt")
    with pytest.raises(InvalidRequestError, match="AWS credentials"):
        gather(["innocent.txt"], load_settings())


def test_files_allow_lets_a_named_store_through(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_FILES_ALLOW", "~/.aws, ~/.netrc, notes/backup.txt")
    write(home / "project", "notes/backup.txt", OPENSSH_KEY)
    files, warnings, text = read(["~/.aws", "~/.netrc", "notes/backup.txt"])
    # Allowing a file lifts the refusal by path and by content; its credential-shaped text is still
    # sent as [redacted] (docs/files.md).
    assert warnings == [
        *(f"files: {entry!r} is outside the workspace ({home / 'project'})" for entry in ("~/.aws", "~/.netrc")),
        "files: notes/backup.txt holds key-shaped text (private key), sent as [redacted]",
    ]
    assert OPENSSH_KEY.splitlines()[1] not in text
    assert files == [
        str(home / ".aws/config"),
        str(home / ".aws/credentials"),
        str(home / ".netrc"),
        "notes/backup.txt",
    ]
    assert SECRET in text


def test_a_store_under_a_relocated_xdg_config_home_is_recognised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert credential_store(tmp_path / "cfg/gh/hosts.yml") == "GitHub CLI tokens"
    assert credential_store(tmp_path / "cfg/gcloud/credentials.db") == "Google Cloud credentials"
    assert credential_store(tmp_path / "cfg/app/settings.toml") is None


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py", "README.md", "go.sum", "package.json", "config/settings.yaml", "docs/keys.md",
        "tests/test_env.py", "environment.yml", "src/keyboard.c", "Makefile", ".gitignore", ".github/workflows/ci.yml",
    ],
)  # fmt: skip
def test_ordinary_project_files_are_no_credential_store(path: str) -> None:
    assert credential_store(Path("/work/project") / path) is None


def test_every_store_pattern_is_lower_case_and_said_in_words() -> None:
    """Paths are matched lower-cased; an upper-case pattern would never match."""
    for pattern, what in CREDENTIAL_STORES:
        assert pattern == pattern.lower() and what and not what.endswith(".")


@given(
    st.sampled_from([p for p, _ in CREDENTIAL_STORES if "/" not in p and "*" not in p]),
    st.sampled_from(["", "a/", "a/b/"]),
)
def test_a_store_name_is_recognised_at_any_depth(name: str, prefix: str) -> None:
    assert credential_store(Path("/x") / prefix / name) is not None
    assert credential_store(Path("/x") / prefix / name.upper()) is not None


def test_a_code_directory_named_like_a_credential_file_is_read(home: Path) -> None:
    project = home / "project"
    write(project, "src/credentials/__init__.py", "def load(): ...\n")
    write(project, "src/secrets.env/readme.md", "notes\n")
    files, warnings, _ = read(["src"])
    assert files == ["src/credentials/__init__.py", "src/secrets.env/readme.md"] and warnings == []
    assert read(["src/credentials"])[0] == ["src/credentials/__init__.py"]
