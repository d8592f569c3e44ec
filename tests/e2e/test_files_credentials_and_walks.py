"""Credentials never leave the machine, and every walk answers: the real server over stdio with the
official MCP client, against the strict fake upstream. A credential file or a private key named is
refused before any request; reached by a directory it is left out with a warning and the fake never
sees it; a huge tree and `/` itself stop at the entry limit with INVALID_REQUEST; a path outside the
workspace is read with a warning; the server keeps serving after each refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text
from harness import router_session

pytestmark = pytest.mark.e2e

NETRC_PASSWORD = "netrc-password-never-sent-4242"
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
PRIVATE_KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"
MODEL = "claude-sonnet-4-5"


@pytest.fixture
def env(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text(f"machine example.com login me password {NETRC_PASSWORD}\n", encoding="utf-8")
    (home / ".ssh/id_ed25519").write_text(PRIVATE_KEY, encoding="utf-8")
    workspace = tmp_path / "project"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes/readme.md").write_text("Deploy with make.\n", encoding="utf-8")
    (workspace / "notes/backup.txt").write_text(PRIVATE_KEY, encoding="utf-8")
    (workspace / "notes/.env").write_text(f"PASSWORD={NETRC_PASSWORD}\n", encoding="utf-8")
    huge = tmp_path / "huge"
    for i in range(60):
        directory = huge / f"d{i:02}"
        directory.mkdir(parents=True)
        for j in range(20):
            (directory / f"f{j:02}.conf").write_text("x\n", encoding="utf-8")
    (tmp_path / "elsewhere.txt").write_text("outside\n", encoding="utf-8")
    return {
        **server_env,
        "HOME": str(home),
        "COLIBRI_WORKSPACE": str(workspace),
        "COLIBRI_FILES_MAX_ENTRIES": "1000",
    }


async def call(session: Any, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool("router_call", {"model": MODEL, "prompt": "Review", **arguments})
    structured: dict[str, Any] = result.structured_content or {}
    text = result.content[0].text
    assert json.loads(text.split("\n", 1)[1] if result.is_error else text) == structured
    return structured | {"is_error": result.is_error, "text": text}


def refused(result: dict[str, Any], *phrases: str) -> None:
    assert result["is_error"], result
    assert result["error"]["code"] == "INVALID_REQUEST"
    assert result["text"].startswith("INVALID_REQUEST: ")
    for phrase in phrases:
        assert phrase in result["error"]["message"], result["error"]["message"]


async def test_credentials_are_refused_or_left_out_and_never_reach_the_upstream(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path, tmp_path: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("Looks fine."), anthropic_text("Read it."))
    async with router_session(env, server_log) as session:
        refused(await call(session, files=["~/.netrc"]), "looks like a secret (netrc logins)", "COLIBRI_FILES_ALLOW")
        refused(await call(session, files=["~/.ssh/id_ed25519"]), "looks like a secret (SSH keys)")
        refused(await call(session, files=["notes/backup.txt"]), "'notes/backup.txt' holds a private key")
        assert fake_upstream.requests == []

        reviewed = await call(session, files=["notes", "~"])
        assert not reviewed["is_error"], reviewed
        assert [file["path"] for file in reviewed["files_read"]] == ["notes/readme.md"]
        assert reviewed["warnings"] == [
            f"files: '~' is outside the workspace ({tmp_path / 'project'})",
            "files: '~' left out 2 hidden files and folders of the home directory (name one to read it)",
            "files: '~' matched no file",
            "files: notes/.env looks like a secret (environment secrets): left out",
            "files: notes/backup.txt holds a private key: left out",
        ]

        outside = await call(session, files=["../elsewhere.txt"])
        assert not outside["is_error"], outside
        assert f"files: '../elsewhere.txt' is outside the workspace ({tmp_path / 'project'})" in outside["warnings"]

    assert len(fake_upstream.anthropic.requests) == 2
    for request in fake_upstream.requests:
        assert NETRC_PASSWORD.encode() not in request.raw
        assert KEY_BODY.encode() not in request.raw
        assert b"PRIVATE KEY" not in request.raw
    assert b"Deploy with make." in fake_upstream.anthropic.requests[0].raw
    assert b"outside" in fake_upstream.anthropic.requests[1].raw
    assert fake_upstream.violations == []


async def test_huge_walks_and_the_whole_disk_stop_at_the_entry_limit(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path, tmp_path: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("Still here."))
    huge = tmp_path / "huge"
    async with router_session(env, server_log) as session:
        for entry in (str(huge), f"{huge}/**/*.conf", "/", "/**/*.conf"):
            refused(
                await call(session, files=[entry]),
                f"{entry!r} visits more than 1000 files and directories",
                "COLIBRI_FILES_MAX_ENTRIES",
            )
        assert fake_upstream.requests == []
        narrow = await call(session, files=[f"{huge}/d00/*.conf"])
        assert not narrow["is_error"], narrow
        assert len(narrow["files_read"]) == 20
    assert len(fake_upstream.anthropic.requests) == 1
