"""Packaging and docs stay in step with the code: server.json, .env.example, README.md and docs/, .ci/run.

All offline. The MCP registry schema lives in the shared directory next to the repository
(``../shared/schemas``); the schema test is skipped only when that directory is absent.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from docs_pages import all_docs, code_blocks, page, section
from fake_upstream import FakeUpstream

import colibri_router
from colibri_router.providers import BUILTIN
from colibri_router.settings import Settings

ROOT = Path(__file__).parents[1]
SHARED_SCHEMAS = ROOT.parent / "shared" / "schemas"
# Each built-in provider's variables come from its registry entry: the registry is the one source.
KEY_VARIABLES = {name for spec in BUILTIN.values() for name in spec.key_envs}
# Secret although not a key: a database URL may carry the database's password; the /ui session key.
SECRET_VARIABLES = {*KEY_VARIABLES, "COLIBRI_DATABASE_URL", "COLIBRI_HTTP_SESSION_SECRET"}
BASE_URL_DEFAULTS = {spec.base_url_env: spec.base_url for spec in BUILTIN.values() if spec.base_url_env}
# Where a command-line agent's executable may be named instead of PATH (its registry entry says).
AGENT_BIN_VARIABLES = {spec.agent.bin_env for spec in BUILTIN.values() if spec.agent is not None}
# Read by the settings and config loaders themselves rather than by a Settings field.
ENV_FILE_VARIABLE = "COLIBRI_ENV_FILE"
FILE_VARIABLES = {ENV_FILE_VARIABLE, "COLIBRI_CONFIG", "COLIBRI_PRICE_UPDATES"}
# The OpenTelemetry SDK's own (standard) variable that turns tracing on.
STANDARD_VARIABLES = {"OTEL_EXPORTER_OTLP_ENDPOINT"}
# compose.yaml's own (read by docker compose from the same .env, never by the server): not in server.json.
COMPOSE_VARIABLES = {"POSTGRES_PASSWORD"}


def settings_variables() -> dict[str, Any]:
    """Env var name → the Settings field that reads it."""
    fields = {}
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        assert isinstance(alias, str), f"Settings.{name} has no plain validation_alias"
        fields[alias] = field
    return fields


def expected_variables() -> set[str]:
    return {
        *settings_variables(),
        *FILE_VARIABLES,
        *STANDARD_VARIABLES,
        *KEY_VARIABLES,
        *BASE_URL_DEFAULTS,
        *AGENT_BIN_VARIABLES,
    }


def server_json() -> dict[str, Any]:
    return json.loads((ROOT / "server.json").read_text())


def server_json_variables() -> dict[str, dict[str, Any]]:
    (package,) = server_json()["packages"]
    return {entry["name"]: entry for entry in package["environmentVariables"]}


def env_example_variables() -> dict[str, str]:
    """``NAME=value`` lines of .env.example, including commented-out ones (``# NAME=value``)."""
    found = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = re.fullmatch(r"#?\s*([A-Z][A-Z0-9_]*)=(.*)", line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def default_as_text(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ---------------------------------------------------------------------------------------------------------
# server.json


def test_server_json_validates_against_the_registry_schema() -> None:
    document = server_json()
    date = re.search(r"/schemas/([0-9-]+)/server\.schema\.json$", document["$schema"])
    assert date, f"unexpected $schema URL {document['$schema']!r}"
    schema_path = SHARED_SCHEMAS / f"server.schema.{date.group(1)}.json"
    if not SHARED_SCHEMAS.is_dir():
        pytest.skip(f"shared schema directory {SHARED_SCHEMAS} is absent (only present next to the repo)")
    assert schema_path.is_file(), f"server.json names schema {date.group(1)}, but {schema_path} does not exist"
    schema = json.loads(schema_path.read_text())
    assert schema["$id"] == document["$schema"]
    validator_class = jsonschema.validators.validator_for(schema)  # the draft the schema declares
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_server_json_describes_the_pypi_package_on_stdio() -> None:
    document = server_json()
    (package,) = document["packages"]
    assert package["registryType"] == "pypi"
    assert package["identifier"] == pyproject()["project"]["name"] == "colibri-router"
    assert package["transport"] == {"type": "stdio"}
    assert "/" in document["name"]


def test_versions_agree() -> None:
    version = pyproject()["project"]["version"]
    document = server_json()
    (package,) = document["packages"]
    assert document["version"] == package["version"] == version == colibri_router.__version__


# ---------------------------------------------------------------------------------------------------------
# Environment variables: one set everywhere


def test_server_json_lists_exactly_the_variables_the_settings_read() -> None:
    assert set(server_json_variables()) == expected_variables()


def test_env_example_lists_exactly_the_variables_the_settings_read() -> None:
    assert set(env_example_variables()) == expected_variables() | COMPOSE_VARIABLES
    assert not COMPOSE_VARIABLES & set(server_json_variables())


def test_the_docs_mention_every_variable() -> None:
    text = all_docs()
    missing = sorted(name for name in expected_variables() if f"`{name}`" not in text)
    assert not missing, f"neither README.md nor docs/ mentions {missing}"


def test_server_json_variables_are_described_and_keys_are_secret() -> None:
    for name, entry in server_json_variables().items():
        assert entry.get("description"), name
        assert entry.get("isSecret", False) is (name in SECRET_VARIABLES), name
        # Either provider alone works, and every other variable has a default or is optional.
        assert entry.get("isRequired") is False, name


def test_provider_base_url_defaults_are_the_registrys() -> None:
    entries, values = server_json_variables(), env_example_variables()
    for name, default in BASE_URL_DEFAULTS.items():
        assert entries[name].get("default") == default == values[name], name


def test_server_json_defaults_and_choices_match_the_settings() -> None:
    entries = server_json_variables()
    for name, field in settings_variables().items():
        entry = entries[name]
        if field.default is None:
            assert "default" not in entry, name
        else:
            assert entry.get("default") == default_as_text(field.default), name
        choices = typing.get_args(field.annotation) if typing.get_origin(field.annotation) is typing.Literal else ()
        if choices:
            assert entry.get("choices") == list(choices), name
            assert entry.get("default") in choices, name
        else:
            assert "choices" not in entry, name


def test_env_example_keys_are_empty_and_defaults_match_the_settings() -> None:
    values = env_example_variables()
    for name, field in settings_variables().items():
        expected = "" if field.default is None else default_as_text(field.default)
        assert values[name] == expected, name
    assert all(values[name] == "" for name in KEY_VARIABLES)


def test_env_example_loads_as_settings_with_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    from colibri_router.settings import load_settings

    monkeypatch.setenv(ENV_FILE_VARIABLE, str(ROOT / ".env.example"))
    assert load_settings() == Settings()


# ---------------------------------------------------------------------------------------------------------
# README.md and docs/ (tests/test_docs.py checks every block of every page)


def test_quick_start_has_the_two_commands() -> None:
    commands = [block.strip() for block in code_blocks(section("README.md", "Quick start"))]
    assert commands == ["uv run colibri-router", "uv run pytest"]


def test_readme_test_command_is_the_one_ci_runs() -> None:
    readme_command = code_blocks(section("README.md", "Quick start"))[-1].strip()
    ci_commands = [
        line.strip().replace('"${uv[@]}"', "uv")
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if re.search(r"\brun pytest\b", line) and not line.lstrip().startswith("#")
    ]
    assert ci_commands == [readme_command]


def test_readme_json_blocks_parse_and_the_claude_desktop_snippet_runs_uvx() -> None:
    blocks = [json.loads(block) for block in code_blocks(page("README.md"), "json")]
    configs = [block["mcpServers"]["colibri-router"] for block in blocks if "mcpServers" in block]
    assert configs, "README.md has no claude_desktop_config.json snippet"
    assert any(config["command"] == "uvx" and config["args"] == ["colibri-router"] for config in configs)
    for config in configs:
        assert set(config.get("env", {})) <= expected_variables()


def test_the_errors_page_documents_every_error_code() -> None:
    from colibri_router import errors

    codes = {
        code
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.ColibriError)
        for code in (value.code, getattr(value, "api_code", None), getattr(value, "exhausted_code", None))
        if code and not code.startswith(("COLIBRI_", "API_", "RETRIES_")) and code != "TIMEOUT"
    }
    codes.add("INTERNAL_ERROR")  # shaped by the server, not a class
    text = page("errors.md")
    missing = sorted(code for code in codes if f"`{code}`" not in text)
    assert not missing, f"docs/errors.md does not document {missing}"


def test_the_tool_page_documents_every_tool_field() -> None:
    from colibri_router.schema import RouterCallInput, RouterCallResult

    text = page("tools.md")
    fields = {*RouterCallInput.model_fields, *RouterCallResult.model_fields}
    missing = sorted(name for name in fields if f"| `{name}` |" not in text)
    assert not missing, f"docs/tools.md has no table row for {missing}"


def test_the_ask_many_page_documents_router_ask_many_and_its_example_is_a_valid_call_and_result() -> None:
    from colibri_router.ask_many.schema import Answer, RouterAskManyInput, RouterAskManyResult, Verdict
    from colibri_router.schema import RouterCallInput

    text = page("ask-many.md")
    own = set(RouterAskManyInput.model_fields) - set(RouterCallInput.model_fields)
    missing = sorted(name for name in {*own, *RouterAskManyResult.model_fields} if f"| `{name}` |" not in text)
    assert not missing, f"docs/ask-many.md has no table row for {missing}"
    fields = {*Answer.model_fields, *Verdict.model_fields, *RouterAskManyInput.NOT_TAKEN}
    assert not sorted(name for name in fields if f"`{name}`" not in text)
    arguments, result = (json.loads(block) for block in code_blocks(text, "json"))
    RouterAskManyInput.model_validate(arguments)
    assert RouterAskManyResult.model_validate(result).model_dump(mode="json", exclude_none=True) == result


def test_the_command_line_pages_ask_many_command_parses() -> None:
    from colibri_router.cli import build_parser

    [block] = [b for b in code_blocks(page("command-line.md"), "bash") if "ask-many" in b]
    args = build_parser().parse_args(shlex.split(block.strip())[1:])
    assert (args.command, args.models, args.judge) == ("ask-many", ["sonnet", "gpt", "kimi"], "opus")


def test_the_provider_table_matches_the_registry() -> None:
    text = page("providers.md")
    for name, spec in BUILTIN.items():
        row = next((line for line in text.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"docs/providers.md's table has no row for {name}"
        assert f"| {spec.wire} |" in row, name
        if spec.agent is not None:  # a command-line agent: its command and variable instead of a URL
            assert f"`{spec.agent.bin_env}`" in row and f"`{spec.agent.command}`" in row, name
        if spec.subscription:
            assert f"`{spec.default_model}`" in row, name
            continue
        assert f"`{spec.base_url}`" in row and f"`{spec.base_url_env}`" in row, name
        assert all(f"`{key}`" in row for key in spec.key_envs), name
        assert (f"`{spec.default_model}`" if spec.default_model else "pass `model`") in row, name


def test_the_docs_document_doctor_and_its_command_runs(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    """The Troubleshooting section's doctor command, run as written against the loopback fake."""
    assert "colibri-router doctor [--live] [--http [--host H]] [--json]" in page("command-line.md")
    (command,) = [block.strip() for block in code_blocks(page("troubleshooting.md"), "bash")]
    assignment, program, *args = command.split()
    variable, _, _ = assignment.partition("=")
    assert (program, args) == ("colibri-router", ["doctor", "--live"])
    fake_upstream.kimi.models = ["kimi-k2.6"]
    env = {
        "PATH": os.environ.get("PATH", ""),
        variable: "sk-readme-doctor-0123456789",
        "COLIBRI_KIMI_BASE_URL": fake_upstream.kimi_base_url,
        BUILTIN["kimi-anthropic"].base_url_env: fake_upstream.base_url("kimi-anthropic"),  # the same key
        "COLIBRI_STATE_DIR": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    executable = Path(sys.executable).with_name("colibri-router")
    done = subprocess.run([str(executable), *args], env=env, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "live: 1 model in " in done.stdout and "sk-readme-doctor" not in done.stdout
