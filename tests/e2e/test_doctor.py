"""``colibri-router doctor`` as a user runs it: the real process, good and broken settings, ``--live``
against the loopback fake (answering, and refusing the key with a 401), ``--http``, ``--json``
(issue 21 §4). No key's value may ever appear in what it prints."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, error, kimi_text
from harness import ANTHROPIC_KEY, KIMI_KEY, SERVER_COMMAND, every_provider_env, host_env

import colibri_router
from colibri_router.store.sqlite.schema import CURRENT_VERSION

pytestmark = pytest.mark.e2e

ENV_FILE_KEY = "sk-envfile-secret-5555aaaa"


def doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [SERVER_COMMAND, "doctor", *args], env=env, check=False, capture_output=True, text=True, timeout=120
    )
    secrets = {KIMI_KEY, ANTHROPIC_KEY, ENV_FILE_KEY, *(v for k, v in env.items() if k.endswith(("_KEY", "_API_KEY")))}
    for secret in secrets:
        assert secret not in done.stdout and secret not in done.stderr
    return done


def report(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    done = doctor(env, "--json", *args)
    return done.returncode, json.loads(done.stdout)


def providers(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in document["providers"]}


def test_good_settings_are_all_well(fake_upstream: FakeUpstream) -> None:
    env = host_env(fake_upstream)

    shown = doctor(env)
    status, document = report(env)

    assert shown.returncode == 0, shown.stdout
    assert shown.stdout.startswith("colibri-router ")
    assert shown.stdout.rstrip().endswith("all is well")
    assert status == 0 and document["ok"] is True and document["problems"] == []
    kimi = providers(document)["kimi"]
    assert (kimi["status"], kimi["key_set"], kimi["key_variables"]) == ("ok", True, ["COLIBRI_KIMI_API_KEY"])
    assert kimi["base_url"] == fake_upstream.kimi_base_url.rstrip("/")
    assert kimi["base_url_from_variable"] is True
    assert providers(document)["openai"]["status"] == "off"  # no key: not a problem
    assert document["store"]["backend"] == "sqlite"
    assert document["store"]["location"].startswith(os.environ["COLIBRI_STATE_DIR"])
    assert document["env_file"]["status"] == "off" and document["config_file"]["status"] == "off"


def test_a_missing_key_is_named(fake_upstream: FakeUpstream) -> None:
    env = {name: value for name, value in host_env(fake_upstream).items() if not name.endswith("_API_KEY")}

    shown = doctor(env)
    status, document = report(env)

    assert shown.returncode == 1
    assert "no provider has a key" in shown.stdout
    assert status == 1
    assert any("goes to kimi, which has no key: set COLIBRI_KIMI_API_KEY" in p for p in document["problems"])


def test_a_bad_env_file_line_is_reported_by_number_without_its_text(
    fake_upstream: FakeUpstream, tmp_path: Path
) -> None:
    env_file = tmp_path / "colibri.env"
    env_file.write_text(
        f"# keys\nOPENAI_API_KEY={ENV_FILE_KEY}\nMISTRAL_API_KEY {ENV_FILE_KEY}\nCOLIBRI_TIMEOUT_S=-5\n"
    )
    env = {**host_env(fake_upstream), "COLIBRI_ENV_FILE": str(env_file)}

    status, document = report(env)

    assert status == 1
    assert document["env_file"]["path"] == str(env_file)
    assert document["env_file"]["variables"] == 2
    assert any("line 3: cannot be parsed" in p for p in document["env_file"]["problems"])
    (setting,) = document["settings"]["problems"]
    assert "COLIBRI_TIMEOUT_S" in setting and "env file, line 4" in setting
    assert providers(document)["openai"]["key_set"] is True  # read from the file, its value never shown


def test_a_bad_config_file_is_reported_with_its_line(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[aliases]\nmine = "kimi-k2.6"\nbroken = \n')
    env = {**host_env(fake_upstream), "COLIBRI_CONFIG": str(config)}

    shown = doctor(env)
    status, document = report(env)

    assert shown.returncode == 1 and "PROBLEM" in shown.stdout
    assert status == 1
    (problem,) = document["config_file"]["problems"]
    assert str(config) in problem and "not valid TOML" in problem and "line 3" in problem


def test_a_good_config_file_is_summed_up(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[providers.gpu-box]\nwire = "openai"\nbase_url = "{fake_upstream.base_url("custom")}"\n'
        'default_model = "Qwen/Qwen3-Coder"\n\n[aliases]\nmine = "kimi-k2.6"\n'
    )
    env = {**host_env(fake_upstream), "COLIBRI_CONFIG": str(config)}

    status, document = report(env)

    assert status == 0, document["problems"]
    assert (document["config_file"]["providers"], document["config_file"]["aliases"]) == (["gpu-box"], 1)
    assert providers(document)["gpu-box"]["status"] == "ok"


def test_live_asks_each_provider_with_a_key_for_its_model_list(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.models = ["kimi-k2.6", "kimi-k3"]
    env = every_provider_env(fake_upstream)

    shown = doctor(env, "--live")
    status, document = report(env, "--live")

    assert shown.returncode == 0, shown.stdout
    assert "live: 2 models in " in shown.stdout
    assert status == 0
    live = providers(document)["kimi"]["live"]
    assert (live["ok"], live["models"], live["error"]) == (True, 2, None)
    assert isinstance(live["latency_ms"], int) and live["latency_ms"] >= 0
    assert all(entry["live"]["ok"] for entry in document["providers"] if entry["status"] != "off")
    assert "live" not in providers(document)["gemini"]  # no key: not asked
    assert len(fake_upstream.kimi.model_list_requests) == 2
    assert fake_upstream.violations == []


def test_live_reports_a_refused_key_with_its_kind(fake_upstream: FakeUpstream) -> None:
    refused = error(401, message="Invalid Authentication", error_type="invalid_authentication_error")
    fake_upstream.kimi.enqueue_model_list(refused, refused)
    env = every_provider_env(fake_upstream)

    shown = doctor(env, "--live")
    status, document = report(env, "--live")

    assert shown.returncode == 1
    assert "live: AUTH_FAILED" in shown.stdout
    assert status == 1
    kimi = providers(document)["kimi"]
    assert kimi["status"] == "problem"
    assert (kimi["live"]["ok"], kimi["live"]["error"]["kind"]) == (False, "AUTH_FAILED")
    assert kimi["live"]["error"]["code"] == "KIMI_API_ERROR"
    assert any(p.startswith("kimi: the model list failed: KIMI_API_ERROR (AUTH_FAILED)") for p in document["problems"])


def test_live_with_a_key_and_the_provider_unreachable_is_not_keyless(
    fake_upstream: FakeUpstream, tmp_path: Path
) -> None:
    # Only kimi has a key, and nothing listens at its URL: the one problem is the unreachable
    # provider, never "no provider has a key".
    import socket

    with socket.socket() as probe:  # a loopback port just freed: connections to it are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = host_env(fake_upstream)
    del env["ANTHROPIC_API_KEY"], env["ANTHROPIC_BASE_URL"]
    env["COLIBRI_KIMI_BASE_URL"] = f"http://127.0.0.1:{port}/v1"

    shown = doctor(env, "--live")
    status, document = report(env, "--live")

    assert shown.returncode == 1 and status == 1
    assert "no provider has a key" not in shown.stdout
    assert not any("no provider has a key" in problem for problem in document["problems"])
    assert providers(document)["kimi"]["live"]["ok"] is False
    assert any(p.startswith("kimi: the model list failed: ") for p in document["problems"]), document["problems"]
    assert document["default"]["status"] == "ok"


def test_the_store_shows_its_schema_and_size_once_a_call_made_it(fake_upstream: FakeUpstream) -> None:
    env = host_env(fake_upstream)
    fake_upstream.kimi.enqueue(kimi_text("hi"))
    called = subprocess.run(
        [SERVER_COMMAND, "call", "hello"], env=env, check=False, capture_output=True, text=True, timeout=60
    )
    assert called.returncode == 0, called.stderr

    status, document = report(env)

    store = document["store"]
    assert status == 0
    assert (store["exists"], store["writable"], store["schema_version"]) == (True, True, CURRENT_VERSION)
    assert store["size_bytes"] > 0


def test_the_store_off_and_an_unusable_database_url(fake_upstream: FakeUpstream) -> None:
    env = host_env(fake_upstream)

    assert report({**env, "COLIBRI_STORE": "off"})[1]["store"]["status"] == "off"
    status, document = report({**env, "COLIBRI_DATABASE_URL": "mysql://u:pw-secret@127.0.0.1/db"})
    assert status == 1
    assert "COLIBRI_DATABASE_URL is not usable" in document["store"]["problems"][0]
    assert "pw-secret" not in json.dumps(document)


def test_http_checks_the_team_servers_settings(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    env = host_env(fake_upstream)
    tokens = tmp_path / "tokens"

    status, document = report({**env, "COLIBRI_HTTP_TOKENS_FILE": str(tokens)}, "--http")
    assert status == 1
    assert "cannot be read" in document["http"]["problems"][0]
    assert document["http"]["tokens_readable"] is False

    added = subprocess.run(
        [SERVER_COMMAND, "token", "add", "alice"],
        env={**env, "COLIBRI_HTTP_TOKENS_FILE": str(tokens)},
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr
    good = {**env, "COLIBRI_HTTP_TOKENS_FILE": str(tokens), "COLIBRI_HTTP_ALLOWED_HOSTS": "router.example.com"}
    status, document = report(good, "--http", "--host", "0.0.0.0")
    assert status == 0, document["problems"]
    assert (document["http"]["tokens"], document["http"]["allowed_hosts"]) == (1, ["router.example.com"])
    assert added.stdout.strip() not in json.dumps(document)  # the token itself is never shown

    status, document = report(env, "--http", "--host", "0.0.0.0")
    assert status == 1
    assert "serve --http --host 0.0.0.0 would refuse to start" in document["http"]["problems"][0]
    assert "COLIBRI_HTTP_ALLOWED_HOSTS" in document["http"]["problems"][0]
    assert "http" not in report(env)[1]  # only with --http


def test_a_broken_setting_makes_the_hello_line_point_to_doctor(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[aliases\n")
    env = {**host_env(fake_upstream), "COLIBRI_CONFIG": str(config)}
    pid, terminal = pty.fork()
    if pid == 0:
        try:
            os.execve(SERVER_COMMAND, [SERVER_COMMAND], env)
        finally:
            os._exit(127)
    try:
        shown = b""
        while b"colibri-router 0" not in shown or not shown.endswith(b"\n"):
            shown += os.read(terminal, 4096)
        os.write(terminal, b"\x04")  # Ctrl-D: end of input
        os.waitpid(pid, 0)
    finally:
        os.close(terminal)
    hello = next(line for line in shown.decode().splitlines() if line.startswith("colibri-router "))
    assert hello.endswith(": run `colibri-router doctor`")
    assert "a setting is broken (config file" in hello


def test_a_config_error_result_points_to_doctor(fake_upstream: FakeUpstream) -> None:
    env = {name: value for name, value in host_env(fake_upstream).items() if not name.endswith("_API_KEY")}
    called = subprocess.run(
        [SERVER_COMMAND, "call", "hello"], env=env, check=False, capture_output=True, text=True, timeout=60
    )
    assert called.returncode == 1
    message = json.loads(called.stdout)["error"]["message"]
    assert message.startswith("no API key for kimi")
    assert message.endswith("(check every setting: `colibri-router doctor`)")


def test_a_postgresql_store_is_reached_and_described(
    fake_upstream: FakeUpstream, fresh_postgres_database: Callable[[], str]
) -> None:
    url = fresh_postgres_database()
    env = {**host_env(fake_upstream), "COLIBRI_DATABASE_URL": url}

    status, document = report(env)

    store = document["store"]
    assert status == 0, document["problems"]
    assert (store["backend"], store["writable"], store["schema_version"]) == ("postgresql", True, 0)
    assert store["size_bytes"] > 0

    unreachable = "postgresql://colibri:pw-secret-77@127.0.0.1:9/colibri"
    status, document = report({**env, "COLIBRI_DATABASE_URL": unreachable})
    assert status == 1
    assert document["store"]["location"] == "postgresql://colibri@127.0.0.1:9/colibri"
    assert "cannot be reached" in document["store"]["problems"][0]
    assert "pw-secret-77" not in json.dumps(document)


def test_a_base_url_that_is_no_http_url_is_named_with_its_variable(fake_upstream: FakeUpstream) -> None:
    env = {**host_env(fake_upstream), "COLIBRI_KIMI_BASE_URL": "api.moonshot.ai/v1"}

    status, document = report(env)

    assert status == 1
    assert document["version"] == colibri_router.__version__
    assert providers(document)["kimi"]["problems"] == [
        "kimi: base URL 'api.moonshot.ai/v1' is not an http(s) URL (from COLIBRI_KIMI_BASE_URL)"
    ]


def test_a_bad_provider_table_is_reported_with_its_line(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[aliases]\nmine = "kimi-k2.6"\n\n[providers.gpu-box]\nwire = "telepathy"\nbase_url = "x"\n')
    env = {**host_env(fake_upstream), "COLIBRI_CONFIG": str(config)}

    status, document = report(env)

    assert status == 1
    (problem,) = document["config_file"]["problems"]
    assert "[providers.gpu-box]" in problem and problem.endswith("(line 4)")


def test_a_broken_setting_makes_the_hosts_log_line_point_to_doctor(fake_upstream: FakeUpstream) -> None:
    env = {**host_env(fake_upstream), "COLIBRI_TIMEOUT_S": "soon"}

    served = subprocess.run(
        [SERVER_COMMAND], env=env, stdin=subprocess.DEVNULL, check=False, capture_output=True, text=True, timeout=60
    )

    lines = [json.loads(line) for line in served.stderr.splitlines() if line.startswith("{")]
    (hello,) = [line for line in lines if line["event"].startswith("serving MCP on stdio")]
    assert "COLIBRI_TIMEOUT_S" in hello["broken_setting"]
    assert hello["check_with"] == "colibri-router doctor"
    assert served.stdout == ""


def test_command_line_agents_are_shown_found_or_not_and_never_a_problem(
    fake_upstream: FakeUpstream, tmp_path: Path
) -> None:
    codex = tmp_path / "codex"
    codex.write_text('#!/bin/sh\necho "codex-cli 0.0-test"\n')
    codex.chmod(0o755)
    env = {**host_env(fake_upstream), "COLIBRI_CODEX_BIN": str(codex), "COLIBRI_GEMINI_CLI_BIN": str(tmp_path / "no")}
    env["PATH"] = str(tmp_path)  # no real claude or gemini on this PATH

    status, document = report(env)

    shown = providers(document)
    assert status == 0, document["problems"]
    assert (shown["codex"]["status"], shown["codex"]["command_variable"]) == ("ok", "COLIBRI_CODEX_BIN")
    assert shown["gemini-cli"]["status"] == "off"
    assert "npm install -g @google/gemini-cli" in shown["gemini-cli"]["summary"]
    assert shown["host"]["status"] == "off"
