"""Credentials never leave the machine, through the real server over stdio with the official MCP
client against the strict fake upstream: a file holding every format of the corpus reaches the model
with none of them, and the result warns which kinds were found; an upstream error echoing a token
reaches the caller, and the server's log, without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, error, kimi_text
from harness import router_session
from secrets_corpus import corpus

pytestmark = pytest.mark.e2e

CORPUS = corpus()
SECRETS = [secret for sample in CORPUS for secret in sample.secrets]


@pytest.fixture
def env(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    workspace = tmp_path / "project"
    workspace.mkdir()
    # One text file per format, each under the name it typically has (the detector reads code and
    # config differently), in a directory `files` walks.
    for index, sample in enumerate(CORPUS):
        folder = workspace / "leaky" / f"{index:02d}"
        folder.mkdir(parents=True)
        (folder / sample.file.lstrip(".")).write_text(sample.text, encoding="utf-8")
    # Allowed, so that files named as credential stores are read too and the detector must catch
    # every format (without it they are left out whole: tests/context/test_credential_files.py).
    return {**server_env, "COLIBRI_WORKSPACE": str(workspace), "COLIBRI_FILES_ALLOW": "leaky"}


async def call(session: Any, **arguments: Any) -> tuple[dict[str, Any], str, bool]:
    result = await session.call_tool("router_call", arguments)
    return result.structured_content or {}, result.content[0].text, bool(result.is_error)


async def test_a_file_with_tokens_sends_none_of_them_upstream(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_text("Nothing secret here."))
    async with router_session(env, server_log) as session:
        structured, text, is_error = await call(session, prompt="Review the configuration", files=["leaky"])

    assert not is_error, text
    assert fake_upstream.violations == []
    [request] = fake_upstream.kimi.requests
    sent = json.dumps(request.body)
    assert "[redacted]" in sent
    leaked = [secret for secret in SECRETS if secret in sent or json.dumps(secret)[1:-1] in sent]
    assert leaked == []
    # Every file is sent, redacted.
    warnings = [w for w in structured["warnings"] if "holds key-shaped text" in w]
    assert len(warnings) == len(CORPUS), structured["warnings"]
    named = " ".join(warnings)
    for kind in {sample.kind for sample in CORPUS}:
        assert f"{kind}" in named, kind
    assert not any(secret in text or secret in named for secret in SECRETS)


async def test_an_upstream_error_echoing_a_token_reaches_nobody(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    github = next(s for s in CORPUS if s.kind == "GitHub token").secrets[0]
    stripe = next(s for s in CORPUS if s.kind == "Stripe key").secrets[0]
    echo = f"Invalid request: the prompt quotes {github} and {stripe}"
    fake_upstream.kimi.enqueue(error(400, message=echo, error_type="invalid_request_error"))
    async with router_session(env, server_log) as session:
        structured, text, is_error = await call(session, prompt="hello")

    assert is_error
    assert "[redacted]" in text
    for token in (github, stripe):
        assert token not in text and token not in json.dumps(structured)
        assert token not in server_log.read_text(encoding="utf-8")


async def test_a_keyless_local_servers_error_echoing_a_token_is_redacted(
    fake_upstream: FakeUpstream, env: dict[str, str], server_log: Path
) -> None:
    """No key of ours to scrub (LM Studio takes none): the error is redacted all the same."""
    npm = next(s for s in CORPUS if s.kind == "npm token").secrets[0]
    fake_upstream.route("lmstudio").enqueue(error(400, message=f"bad prompt near {npm}"))
    local = {**env, "LMSTUDIO_BASE_URL": fake_upstream.base_url("lmstudio")}
    async with router_session(local, server_log) as session:
        structured, text, is_error = await call(session, prompt="hello", provider="lmstudio", model="qwen3-8b")

    assert is_error
    assert "[redacted]" in text
    assert npm not in text and npm not in json.dumps(structured)
    assert npm not in server_log.read_text(encoding="utf-8")
