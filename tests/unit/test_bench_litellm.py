"""Benchmark 9's LiteLLM row, the parts that need neither LiteLLM nor a network: the proxy's config and
command, the streamed answer's check, the environment's provisioning decisions, the row's wording."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
import yaml

from benchmarks import floors, litellm_proxy
from benchmarks.upstream import ANSWER, PROMPT

URL = "http://127.0.0.1:4000"


def test_config_points_the_model_at_the_given_base_url() -> None:
    config = litellm_proxy.proxy_config("http://127.0.0.1:5/kimi/v1", "kimi-k2.6", "sk-dummy")
    # Written as JSON, read by LiteLLM as YAML: the same document either way.
    assert yaml.safe_load(json.dumps(config)) == config
    assert config == {
        "model_list": [
            {
                "model_name": "kimi-k2.6",
                "litellm_params": {
                    "model": "openai/kimi-k2.6",
                    "api_base": "http://127.0.0.1:5/kimi/v1",
                    "api_key": "sk-dummy",
                },
            }
        ]
    }


def test_proxy_stays_on_loopback_without_telemetry_or_remote_catalogs() -> None:
    command = litellm_proxy.proxy_command(Path("/venv/bin/litellm"), Path("/tmp/c.yaml"), 4321)
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--telemetry") + 1] == "False"
    assert command[command.index("--num_workers") + 1] == "1"
    env = litellm_proxy.LOCAL_ONLY_ENV
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    urls = [value for name, value in env.items() if name.endswith("_URL")]
    assert len(urls) == 4 and all(url.startswith("http://127.0.0.1:") for url in urls)


def _sse(*events: str) -> bytes:
    return "".join(f"data: {event}\n\n" for event in events).encode()


def _delta(text: str) -> str:
    return json.dumps({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]})


async def _chat(status: int, body: bytes) -> list[dict[str, object]]:
    requests: list[dict[str, object]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        assert request.url == f"{URL}/v1/chat/completions"
        requests.append(json.loads(request.content))
        return httpx2.Response(status, content=body, headers={"content-type": "text/event-stream"})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as client:
        await litellm_proxy.chat(client, URL)
    return requests


async def test_chat_streams_the_prompt_and_accepts_the_answer() -> None:
    half = len(ANSWER) // 2
    (sent,) = await _chat(200, _sse(_delta(""), _delta(ANSWER[:half]), _delta(ANSWER[half:]), "[DONE]"))
    assert sent == {"model": litellm_proxy.MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True}


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (200, _sse(_delta(""), "[DONE]"), "no content"),
        (200, _sse(_delta(ANSWER)), "without data: \\[DONE\\]"),
        (200, _sse(_delta("something else"), "[DONE]"), "not 'echo"),
        (200, _sse(json.dumps({"error": {"message": "upstream 500"}}), "[DONE]"), "streamed an error"),
        (500, b'{"error": "boom"}', "answered 500"),
    ],
)
async def test_chat_raises_unless_the_answer_arrived(status: int, body: bytes, reason: str) -> None:
    with pytest.raises(RuntimeError, match=reason):
        await _chat(status, body)


def test_provision_reuses_a_finished_environment_and_skips_without_uv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(litellm_proxy.shutil, "which", lambda _name: None)
    with pytest.raises(litellm_proxy.Unavailable, match="uv is not on PATH"):
        litellm_proxy.provision(tmp_path)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "litellm").write_text("#!/bin/sh\n")
    with pytest.raises(litellm_proxy.Unavailable):  # an install that never finished is redone, not trusted
        litellm_proxy.provision(tmp_path)
    (tmp_path / ".installed").write_text("done\n")
    assert litellm_proxy.provision(tmp_path) == tmp_path / "bin" / "litellm"


def _server(name: str, p50_s: float, calls: int, cpu_s: float, *, mcp: bool = True) -> floors._Server:
    return floors._Server(name, URL, 1, mcp, [p50_s], calls, 1.0, cpu_s)


def test_report_sets_colibri_beside_litellm_or_says_why_it_is_missing() -> None:
    servers = [
        _server("bare SDK server, trivial tool", 0.002, 700, 1.0),
        _server("bare SDK relay (the floor)", 0.004, 400, 0.8),
        _server("serve --http, SQLite ledger", 0.006, 300, 0.9),
        _server("serve --http, COLIBRI_STORE=off", 0.005, 350, 0.9),
        _server(litellm_proxy.NAME, 0.008, 200, 0.9, mcp=False),
    ]
    rows = floors._report(servers, 1, 1, True, None).rows
    sqlite, proxy = rows[2], rows[4]
    assert "1.50x LiteLLM's calls/s, 0.75x its p50" in sqlite.measured
    assert proxy.benchmark == f"9 {litellm_proxy.NAME}" and "(0.50x the relay floor)" in proxy.measured
    assert proxy.met is None

    skipped = floors._report(servers[:4], 1, 1, True, "uv is not on PATH").rows
    assert skipped[-1].measured == "skipped: uv is not on PATH"
    assert "LiteLLM" not in skipped[2].measured
    left_out = floors._report(servers[:4], 1, 1, False, None)
    assert len(left_out.rows) == 4 and "--no-litellm" in left_out.notes[0]


def test_a_failed_install_is_a_skip_with_uvs_last_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uv = tmp_path / "uv"
    # Like uv offline: the environment is created, the install cannot resolve.
    uv.write_text('#!/bin/sh\n[ "$1" = venv ] && exit 0\necho "  hint: no network" >&2\nexit 2\n')
    uv.chmod(0o755)
    monkeypatch.setattr(litellm_proxy.shutil, "which", lambda _name: str(uv))
    with pytest.raises(litellm_proxy.Unavailable, match=r"^uv pip install failed: hint: no network$"):
        litellm_proxy.provision(tmp_path / "venv")
    assert not (tmp_path / "venv" / ".installed").exists()
