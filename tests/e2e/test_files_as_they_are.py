"""Files read as they are (issue 32), through the real server over stdio with the official MCP client and
the `colibri-router call` command, against the strict fake upstream: text in each encoding and with each
line ending arrives as its text, numbered line by line, its encoding named in `files_read`; broken PDFs
and images are INVALID_REQUEST naming the file, never an internal error or a traceback, and the server
keeps serving."""

from __future__ import annotations

import codecs
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text
from harness import SERVER_COMMAND, router_session
from media_samples import noisy_png, pdf_with_content, pdf_with_text, rewritten_pdf, text_stream, truncated

pytestmark = pytest.mark.e2e

FRENCH = "Le café était plein.\nÀ demain, Zoë !\n"
# name → (bytes on disk, the encoding files_read names or None, the lines the model reads)
TEXTS: dict[str, tuple[bytes, str | None, list[str]]] = {
    "utf16le.txt": (codecs.BOM_UTF16_LE + FRENCH.encode("utf-16-le"), "utf-16-le", FRENCH.splitlines()),
    "utf16be.txt": (codecs.BOM_UTF16_BE + FRENCH.encode("utf-16-be"), "utf-16-be", FRENCH.splitlines()),
    "utf32le.txt": (codecs.BOM_UTF32_LE + FRENCH.encode("utf-32-le"), "utf-32-le", FRENCH.splitlines()),
    "utf32be.txt": (codecs.BOM_UTF32_BE + FRENCH.encode("utf-32-be"), "utf-32-be", FRENCH.splitlines()),
    "latin1.txt": (FRENCH.encode("latin-1"), "cp1252", FRENCH.splitlines()),
    "cp1252.txt": ("“Smart” quotes – €5\n".encode("cp1252"), "cp1252", ["“Smart” quotes – €5"]),  # noqa: RUF001
    "utf8bom.py": (codecs.BOM_UTF8 + b"x = 1\n", None, ["x = 1"]),
    "mac.txt": (b"one\rtwo\rthree\r", None, ["one", "two", "three"]),
    "dos.txt": (b"one\r\ntwo\r\n", None, ["one", "two"]),
    "mixed.txt": (b"a\nb\r\nc\rd", None, ["a", "b", "c", "d"]),
}

SHOT = truncated(noisy_png(1250, 1150), 0.95)  # a 4.1 MB PNG missing its tail


@pytest.fixture
def env(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    workspace = tmp_path / "project"
    (workspace / "text").mkdir(parents=True)
    for name, (data, _, _) in TEXTS.items():
        (workspace / "text" / name).write_bytes(data)
    (workspace / "scan.pdf").write_bytes(truncated(pdf_with_text("Quarterly numbers"), 0.5))
    (workspace / "fax.pdf").write_bytes(pdf_with_content(text_stream("Hi"), b"/Filter /JBIG2Decode"))
    (workspace / "locked.pdf").write_bytes(rewritten_pdf(pdf_with_text("Secret"), user_password="s3cret"))
    (workspace / "shot.png").write_bytes(SHOT)
    return {**server_env, "COLIBRI_WORKSPACE": str(workspace)}


async def call(session: Any, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool("router_call", arguments)
    structured: dict[str, Any] = result.structured_content or {}
    text = result.content[0].text
    assert json.loads(text.split("\n", 1)[1] if result.is_error else text) == structured
    return structured | {"is_error": result.is_error}


def blocks(text: str) -> dict[str, list[str]]:
    """Each `<file>` block of the text sent, by path: its lines without their numbers."""
    found: dict[str, list[str]] = {}
    for chunk in text.split('<file path="')[1:]:
        path, body = chunk.split('">\n', 1)
        rows = body.split("\n</file>", 1)[0].split("\n") if not body.startswith("</file>") else []
        found[path] = [row.split("│ ", 1)[1] for row in rows]
    return found


async def test_every_encoding_and_line_ending_arrives_as_its_text(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("Read."))
    async with router_session(env, server_log) as session:
        result = await call(session, prompt="Read these", files=["text"], model="claude-sonnet-4-5")
    assert not result["is_error"], result
    assert result["warnings"] == []
    read = {entry["path"]: entry for entry in result["files_read"]}
    assert set(read) == {f"text/{name}" for name in TEXTS}
    for name, (data, encoding, _) in TEXTS.items():
        entry = read[f"text/{name}"]
        assert entry["bytes"] == len(data)
        assert entry.get("encoding") == encoding  # absent for UTF-8
        assert ("encoding" in entry) == (encoding is not None)
    assert fake_upstream.violations == []
    content = fake_upstream.anthropic.requests[0].body["messages"][0]["content"]
    sent = blocks("".join(block["text"] for block in content if block["type"] == "text"))
    assert sent == {f"text/{name}": lines for name, (_, _, lines) in TEXTS.items()}


async def test_broken_files_are_invalid_requests_naming_them_and_the_server_keeps_serving(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(anthropic_text("Still here."))
    async with router_session(env, server_log) as session:
        scan = await call(session, prompt="Read", files=["scan.pdf"], model="kimi-k2-0905-preview")
        fax = await call(session, prompt="Read", files=["fax.pdf"], model="kimi-k2-0905-preview")
        locked = await call(session, prompt="Read", files=["locked.pdf"], model="claude-sonnet-4-5")
        shot = await call(session, prompt="See", files=["shot.png"], model="claude-sonnet-4-5")
        fine = await call(session, prompt="Read", files=["text/dos.txt"], model="claude-sonnet-4-5")
    for refused, words in [
        (scan, "scan.pdf could not be read here to send its text (it is damaged or unsupported"),
        (fax, "fax.pdf could not be read here to send its text (the text of page 1 could not be extracted: jbig2dec"),
        (locked, "locked.pdf is encrypted: it opens only with its password"),
        (shot, f"shot.png ({len(SHOT)} bytes) is over claude's limit of 3932160 bytes and could not be decoded"),
    ]:
        assert refused["is_error"] and refused["error"]["code"] == "INVALID_REQUEST", refused
        assert words in refused["error"]["message"]
    assert not fine["is_error"] and fine["content"] == "Still here."
    assert len(fake_upstream.requests) == 1
    assert "Traceback" not in server_log.read_text()


def test_the_call_command_prints_a_broken_files_refusal_as_json(
    fake_upstream: FakeUpstream, env: dict[str, str]
) -> None:
    """pypdf's DependencyError (no jbig2dec) once escaped as a traceback with no JSON."""
    run = subprocess.run(
        [SERVER_COMMAND, "call", "Read", "--file", "fax.pdf", "--model", "kimi-k2-0905-preview"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    error = json.loads(run.stdout)["error"]
    assert error["code"] == "INVALID_REQUEST" and "fax.pdf could not be read here" in error["message"]
    assert "Traceback" not in run.stderr
    assert fake_upstream.requests == []
