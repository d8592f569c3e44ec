"""Benchmark 9's LiteLLM row: LiteLLM's proxy in front of the same lean upstream, over plain HTTP.

Why: an operator choosing a shared router would otherwise run LiteLLM's proxy, so issue 22 puts it
beside ``serve --http`` and the SDK floors in one run. It answers OpenAI's HTTP API, not MCP, so its
row measures a gateway without the MCP layer: it is a reference, not a floor.

How: LiteLLM is never a dependency of colibri-router. ``provision`` creates a virtual environment of
its own at ``.bench/litellm-1.102.4/`` in the repository root (``uv venv`` on the benchmark's
interpreter, then ``uv pip install "litellm[proxy]==1.102.4"``, a few seconds to a minute the first
time) and reuses it afterwards; without ``uv`` or PyPI it raises ``Unavailable`` and the row is
reported as skipped. ``spawned_proxy`` starts ``litellm --config`` on 127.0.0.1 with one worker, no
database and one model entry pointing at the lean upstream's Kimi base URL (the URL and model
``router_call`` uses, a dummy key), and waits for ``/health/readiness``. ``chat`` is the client: it
POSTs ``/v1/chat/completions`` with ``"stream": true`` (so the proxy streams from the upstream, as
the router does) and reads the SSE answer to its end.

Nothing leaves the machine: LiteLLM's start-up would fetch its model cost map from GitHub (the one
outbound attempt an audit hook saw); ``LOCAL_ONLY_ENV`` makes it use the bundled copies of that map
and of its other remote catalogs, points their URLs at the closed discard port anyway, and
``--telemetry False`` turns its usage reporting off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from benchmarks.upstream import ANSWER, KIMI_KEY, NO_UPSTREAM, PROMPT, ROOT, spawned_http
from colibri_router.providers.builtin import BUILTIN_PROVIDERS

VERSION = "1.102.4"
NAME = f"LiteLLM proxy {VERSION} (plain HTTP, not MCP)"
VENV = ROOT / ".bench" / f"litellm-{VERSION}"
# The model router_call sends when the call names none: the default provider's (kimi) default model.
MODEL = next(spec.default_model for spec in BUILTIN_PROVIDERS if spec.name == "kimi")
INSTALL_TIMEOUT_S = 600
# Documented switches (LiteLLM's docs and source) that keep its start-up and calls on this machine.
LOCAL_ONLY_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_MODEL_COST_MAP_URL": NO_UPSTREAM,
    "LITELLM_ANTHROPIC_BETA_HEADERS_URL": NO_UPSTREAM,
    "LITELLM_BLOG_POSTS_URL": NO_UPSTREAM,
    "LITELLM_AUTOROUTER_PRESETS_URL": NO_UPSTREAM,
    "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True",
}


class Unavailable(Exception):
    """LiteLLM cannot run here (no uv, no PyPI, a failed install): the row is skipped with this reason."""


def provision(venv: Path = VENV) -> Path:
    """The ``litellm`` command of the benchmark's own LiteLLM environment, installed on first use."""
    command = venv / "bin" / "litellm"
    done = venv / ".installed"  # written last: an interrupted install is redone, not trusted
    if command.is_file() and done.is_file():
        return command
    uv = shutil.which("uv")
    if uv is None:
        raise Unavailable("uv is not on PATH")
    steps = [
        [uv, "venv", "--quiet", "--allow-existing", "--python", sys.executable, str(venv)],
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), f"litellm[proxy]=={VERSION}"],
    ]
    print(f"installing LiteLLM {VERSION} into {venv} (first run only)…", file=sys.stderr, flush=True)
    for step in steps:
        name = "uv venv" if step[1] == "venv" else "uv pip install"
        try:
            done_step = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"{name}: {exc}") from exc
        if done_step.returncode != 0:
            last = (done_step.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"{name} failed: {last.strip()}")
    if not command.is_file():
        raise Unavailable(f"the install left no {command}")
    done.write_text(f"litellm[proxy]=={VERSION}\n")
    return command


def proxy_config(base_url: str, model: str = MODEL, api_key: str = KIMI_KEY) -> dict[str, object]:
    """One model entry: ``model`` served by the OpenAI-compatible upstream at ``base_url``.

    No master key and no database: LiteLLM's lightest proxy, which authenticates nobody and records
    no spend (colibri-router's row checks a bearer token and writes a ledger row per call).
    """
    return {
        "model_list": [
            {
                "model_name": model,
                "litellm_params": {"model": f"openai/{model}", "api_base": base_url, "api_key": api_key},
            }
        ],
    }


def proxy_command(litellm: Path, config: Path, port: int) -> list[str]:
    """Loopback only, one uvicorn worker in the process itself (no forks), no usage reporting."""
    command = [str(litellm), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    return [*command, "--num_workers", "1", "--telemetry", "False"]


@contextmanager
def spawned_proxy(litellm: Path, base_url: str, directory: Path, port: int) -> Iterator[tuple[str, int]]:
    """The proxy's base URL and pid once ready; stopped on exit. Its log is ``directory/litellm.log``."""
    config = directory / "litellm.yaml"
    config.write_text(json.dumps(proxy_config(base_url)))  # YAML reads JSON
    env = {"PATH": os.environ["PATH"], "HOME": str(directory), **LOCAL_ONLY_ENV}
    command = proxy_command(litellm, config, port)
    with spawned_http(command, env, directory / "litellm.log", port, health="/health/readiness", path="") as spawned:
        yield spawned


def client() -> httpx2.AsyncClient:
    """One simulated client: its own keep-alive connection, like each MCP client's session."""
    return httpx2.AsyncClient(timeout=60, trust_env=False)


async def chat(http: httpx2.AsyncClient, url: str) -> None:
    """One streamed chat completion of ``PROMPT`` through the proxy; raises unless ``ANSWER`` arrived."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True}
    async with http.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
        if response.status_code != 200:
            await response.aread()
            raise RuntimeError(f"LiteLLM answered {response.status_code}: {response.text[:300]}")
        text = await sse_text(response.aiter_lines())
    if text != ANSWER:
        raise RuntimeError(f"LiteLLM's answer was {text!r}, not {ANSWER!r}")


async def sse_text(lines: AsyncIterable[str]) -> str:
    """The content deltas of a chat.completion.chunk SSE stream, joined; raises on an error event, on
    a stream without ``data: [DONE]`` or without content."""
    parts: list[str] = []
    finished = False
    async for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            finished = True
            continue
        chunk = json.loads(data)
        if "error" in chunk:
            raise RuntimeError(f"LiteLLM streamed an error: {chunk['error']}")
        for choice in chunk.get("choices", []):
            parts.append((choice.get("delta") or {}).get("content") or "")
    if not finished:
        raise RuntimeError("LiteLLM's stream ended without data: [DONE]")
    if not "".join(parts):
        raise RuntimeError("LiteLLM's stream carried no content")
    return "".join(parts)
