"""Every fenced block of README.md and docs/*.md is checked against the real code, so the docs cannot drift.

- ``json``: parses; an MCP host's config (``mcpServers`` / VS Code's ``servers``) has a command (whose
  line is checked like a shell line) or a URL, and only env names the settings and registry read; a
  tool's arguments or result validates against the tool's own models.
- ``toml``: parses; Codex's ``[mcp_servers.*]`` as a host config; colibri-router's config file is loaded
  through the real loader (``providers/config.py``).
- ``yaml``: parses. ``python``: runs against the loopback fake upstream.
- ``bash``/``sh``/``console``: every ``colibri-router`` line (bare, ``uv run``, ``uvx``, ``uvx --from``,
  ``python -m colibri_router``) is parsed by the real argparse parser, and the runnable ones run as a
  process against the fake; every other program must be in ``OTHER_PROGRAMS``, with the reason it is
  not run here.
- ``text``: output and synopses shown as printed, nothing to run.

A block in a language this module does not know fails. Relative links must reach an existing file and
heading, and ``mkdocs build --strict`` must pass.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from docs_pages import DOCS, ROOT, fenced_blocks, page, page_names, page_path
from e2e.harness import every_provider_env
from fake_upstream import FakeUpstream
from pydantic import TypeAdapter
from test_packaging import KEY_VARIABLES, expected_variables

from colibri_router.providers import BUILTIN

CLI = str(Path(sys.executable).with_name("colibri-router"))
SHELLS = {"bash", "sh", "console"}
# Subcommands run for real against the fake; the others are parsed only, for the reason given.
RUNNABLE = {"version", "serve", "call", "ask-many", "models", "threads", "usage", "doctor", "token", "run", "jobs"}
PARSED_ONLY = {"serve --http": "a long-running server on an outside address: tests/e2e/test_http_server.py runs it"}
# Programs other than colibri-router that the docs may show, and why each is not run here.
OTHER_PROGRAMS = {
    "claude": "Claude Code, not installed here; its --env names and the command after -- are checked",
    "codex": "Codex CLI, not installed here",
    "gemini": "Gemini CLI, not installed here",
    "docker": "needs Docker; tests/test_container.py checks the compose block against compose.yaml",
    "curl": "talks to a running team server; tests/e2e/test_container_command.py checks /healthz",
    "pip": "installs from PyPI (network)",
    "sudo": "installs system packages (the PostgreSQL programs the store tests need)",
    "git": "tags and pushes a release (docs/releasing.md)",
    "cp": "a file copy in the user's checkout",
    "touch": "creates the empty tokens file before Docker mounts it",
    "chmod": "lets the container's user read the tokens file",
}
UV_TOOLS = {
    "pytest": "the test suite itself",
    "ruff": "the linter, run by .ci/run",
    "mypy": "the type checker, run by .ci/run",
    "mkdocs": "the site, built by test_the_site_builds_strictly",
}
SCRIPT_RUNNERS = {"bash", "python3"}  # ``bash .ci/run``, ``python3 .ci/release_check.py``: the script must exist


def all_blocks() -> list[tuple[str, int, str, str]]:
    return [
        (name, index, language, body)
        for name in page_names()
        for index, (language, body) in enumerate(fenced_blocks(page(name)))
    ]


def block_id(block: tuple[str, int, str, str]) -> str:
    return f"{block[0]}#{block[1]}:{block[2] or 'none'}"


BLOCKS = all_blocks()


# ---------------------------------------------------------------------------------------------------------
# Shell lines


def shell_commands(language: str, body: str) -> list[list[str]]:
    """The commands of a shell block as argument lists: continuations joined, comments and prompts
    dropped (a ``console`` block's commands start with ``$ ``; its other lines are output), and
    ``&&``/``;``/``|`` chains split."""
    lines = body.replace("\\\n", " ").splitlines()
    if language == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    commands: list[list[str]] = []
    for line in lines:
        current: list[str] = []
        for word in shlex.split(line, comments=True):
            if word in {"&&", "||", ";", "|"}:
                commands.append(current)
                current = []
            else:
                current.append(word)
        commands.append(current)
    return [command for command in commands if command]


def split_assignments(words: list[str]) -> tuple[dict[str, str], list[str]]:
    assignments: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        name, _, value = words[0].partition("=")
        assignments[name] = value
        words = words[1:]
    return assignments, words


def colibri_arguments(words: list[str]) -> list[str] | None:
    """The arguments after ``colibri-router`` however it is started, or None when it is not."""
    if words[:1] == ["colibri-router"]:
        return words[1:]
    if words[:3] == ["python", "-m", "colibri_router"]:
        return words[3:]
    if words[:1] == ["uvx"] or words[:2] == ["uv", "run"]:
        rest = words[1:] if words[0] == "uvx" else words[2:]
        # `uv run --directory` would move the server out of the host's project (relative files,
        # the command-line agents): the docs use --project.
        assert "--directory" not in rest, f"{shlex.join(words)}: use uv run --project, which keeps the host's directory"
        while rest and rest[0].startswith("--"):
            takes_value = rest[0] in {"--from", "--project", "--with", "--python"}
            rest = rest[2:] if takes_value else rest[1:]
        if rest[:1] == ["colibri-router"]:
            return rest[1:]
    return None


def parse_colibri(arguments: list[str]) -> Any:
    from colibri_router.cli import build_parser

    try:
        return build_parser().parse_args(arguments)
    except SystemExit as exited:
        if arguments in (["--version"], ["--help"]) and exited.code == 0:
            return None
        raise AssertionError(f"colibri-router {shlex.join(arguments)}: argparse refused it") from None


def check_variables(names: set[str], where: str) -> None:
    # OTEL_* are the OpenTelemetry SDK's own standard variables, read by it once tracing is on.
    unknown = sorted(name for name in names - expected_variables() if not name.startswith("OTEL_"))
    assert not unknown, f"{where}: {unknown} are not variables the settings or the registry read"


def check_command(words: list[str], runs: list[tuple[dict[str, str], list[str]]]) -> None:
    """One shell command of the docs; colibri-router commands to run are appended to ``runs``."""
    assignments, words = split_assignments(words)
    check_variables(set(assignments), shlex.join(words))
    arguments = colibri_arguments(words)
    if arguments is not None:
        parse_colibri(arguments)
        runs.append((assignments, arguments))
        return
    program = words[0]
    if program == "export":
        for word in words[1:]:
            check_variables({word.partition("=")[0]}, "export")
    elif program == "uv":
        check_uv(words)
    elif program in SCRIPT_RUNNERS:
        script = next(word for word in words[1:] if not word.startswith("-"))
        if script != "-m":
            assert (ROOT / script).is_file(), f"{shlex.join(words)}: {script} does not exist"
    elif program == "claude":
        check_claude(words, runs)
    else:
        assert program in OTHER_PROGRAMS, f"{shlex.join(words)}: {program} is not a program the docs test knows"


def check_uv(words: list[str]) -> None:
    if words[1] == "run" and words[2:4] == ["python", "-m"]:
        module = words[4]  # run from the repository root: its own packages (benchmarks) are importable there
        in_root = (ROOT / module.replace(".", "/")).with_suffix(".py").is_file()
        assert in_root or importlib.util.find_spec(module) is not None, f"{shlex.join(words)}: no module {module}"
    elif words[1] == "run":
        assert words[2] in UV_TOOLS, f"{shlex.join(words)}: uv run {words[2]} is not known here"
    else:
        assert words[1] in {"build", "sync", "tool", "add", "lock"}, f"{shlex.join(words)}: unknown uv command"


def check_claude(words: list[str], runs: list[tuple[dict[str, str], list[str]]]) -> None:
    """``claude mcp add NAME [options] -- COMMAND...``: the env names are known, the command is checked."""
    assert words[1:3] == ["mcp", "add"], shlex.join(words)
    cut = words.index("--") if "--" in words else len(words)
    options, command = words[3:cut], words[cut + 1 :]
    env = [options[i + 1] for i, word in enumerate(options) if word in {"--env", "-e"}]
    check_variables({item.partition("=")[0] for item in env}, "claude mcp add --env")
    if command:
        arguments = colibri_arguments(command)
        assert arguments is not None, f"claude mcp add runs {command}, not colibri-router"
        parse_colibri(arguments)
    else:
        assert "--transport" in options, "claude mcp add without a command must name its transport (http)"


# ---------------------------------------------------------------------------------------------------------
# Host configs (JSON and Codex's TOML)


def check_host_servers(servers: dict[str, Any], inputs: set[str], *, vscode: bool) -> None:
    assert servers, "a host config without servers"
    for name, entry in servers.items():
        if vscode:
            assert entry.get("type") in {"stdio", "http"}, f"{name}: VS Code needs type stdio or http"
        if "command" in entry:
            assert isinstance(entry["command"], str) and all(isinstance(a, str) for a in entry.get("args", []))
            arguments = colibri_arguments([entry["command"], *entry.get("args", [])])
            assert arguments is not None, f"{name} does not start colibri-router"
            parse_colibri(arguments)
        else:
            assert isinstance(entry.get("url") or entry.get("httpUrl"), str), f"{name}: no command and no url"
        env = entry.get("env", {})
        check_variables(set(env), f"{name}'s env")
        for value in env.values():
            for used in re.findall(r"\$\{input:([^}]+)\}", value):
                assert used in inputs, f"{name} uses ${{input:{used}}}, which no input defines"
            # A value taken from the host's environment ($NAME, ${NAME}, ${env:NAME}) names a known variable.
            referenced = re.findall(r"\$\{?(?:env:)?([A-Z][A-Z0-9_]*)\}?", value)
            check_variables(set(referenced), f"{name}'s env values")


def check_router_json(document: dict[str, Any]) -> None:
    from colibri_router.ask_many.schema import RouterAskManyInput, RouterAskManyResult
    from colibri_router.jobs.model import JobHandle, JobList, RouterJobInput
    from colibri_router.schema import RouterCallInput, RouterCallResult

    if "prompt" in document or "messages" in document:
        model = RouterAskManyInput if "models" in document else RouterCallInput
        model.model_validate(document)
    elif "next" in document:  # a job's handle (docs/jobs.md)
        JobHandle.model_validate(document)
    elif "jobs" in document:
        JobList.model_validate(document)
    elif "job_id" in document:
        RouterJobInput.model_validate(document)
    elif "answers" in document:
        RouterAskManyResult.model_validate(document)
    else:
        fields = RouterCallResult.model_fields
        unknown = sorted(set(document) - set(fields))
        assert not unknown, f"a JSON block that is no host config, tool input or result (fields {unknown})"
        for key, value in document.items():  # an excerpt of a result: each field as the result types it
            TypeAdapter(fields[key].annotation).validate_python(value)


def check_json(body: str, _runs: list[tuple[dict[str, str], list[str]]]) -> None:
    document = json.loads(body)
    if "mcpServers" in document:
        check_host_servers(document["mcpServers"], set(), vscode=False)
    elif "servers" in document:
        check_host_servers(document["servers"], {i["id"] for i in document.get("inputs", [])}, vscode=True)
    else:
        check_router_json(document)


CODEX_KEYS = {"command", "args", "env", "required", "startup_timeout_sec", "tool_timeout_sec", "enabled", "cwd"}


def check_toml(body: str, _runs: list[tuple[dict[str, str], list[str]]]) -> None:
    document = tomllib.loads(body)
    if "mcp_servers" in document:
        for name, entry in document["mcp_servers"].items():
            unknown = sorted(set(entry) - CODEX_KEYS)
            assert not unknown, f"Codex's [mcp_servers.{name}] has no keys {unknown}"
        check_host_servers(document["mcp_servers"], set(), vscode=False)
    elif "members" in document or "defaults" in document:
        from colibri_router.gateway.policy import parse_policy

        parse_policy(body, "a policy file block")  # a team server's policy file (raises naming the problem)
    else:
        check_colibri_config(body)


def check_colibri_config(body: str) -> None:
    """A config-file block, loaded by the real loader as the server would load it."""
    from colibri_router.providers.config import load_config

    directory = Path(os.environ["XDG_CONFIG_HOME"]) / "colibri-router"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "config.toml"
    path.write_text(body)
    loaded = load_config(frozenset(BUILTIN))  # raises ConfigError naming the problem
    assert loaded.path == str(path) and (loaded.providers or loaded.aliases or loaded.fallback or loaded.routing)


def check_yaml(body: str, _runs: list[tuple[dict[str, str], list[str]]]) -> None:
    yaml.safe_load(body)


def check_shell(body: str, runs: list[tuple[dict[str, str], list[str]]], language: str = "bash") -> None:
    commands = shell_commands(language, body)
    assert commands, "an empty shell block"
    for words in commands:
        check_command(words, runs)


def check_text(_body: str, _runs: list[tuple[dict[str, str], list[str]]]) -> None:
    """Output and synopses as printed (error lines, a file block, the command-line synopsis)."""


def check_python(body: str) -> None:
    """Compiles here; test_the_python_examples_run_against_the_fake runs it."""
    compile(body, "<docs>", "exec")


CHECKERS: dict[str, Callable[[str, list[tuple[dict[str, str], list[str]]]], None]] = {
    "json": check_json,
    "toml": check_toml,
    "yaml": check_yaml,
    "bash": check_shell,
    "sh": check_shell,
    "console": lambda body, runs: check_shell(body, runs, "console"),
    "text": check_text,
    "python": lambda body, runs: check_python(body),
}


@pytest.mark.parametrize("block", BLOCKS, ids=block_id)
def test_every_block_is_valid(block: tuple[str, int, str, str]) -> None:
    _, _, language, body = block
    assert language in CHECKERS, f"a block in {language or 'no language'}: tests/test_docs.py cannot check it"
    CHECKERS[language](body, [])


def test_the_docs_have_blocks_of_each_kind() -> None:
    languages = {language for _, _, language, _ in BLOCKS}
    assert {"json", "toml", "bash", "python", "text"} <= languages
    assert len([b for b in BLOCKS if b[0] == "README.md"]) >= 10


# ---------------------------------------------------------------------------------------------------------
# Running the runnable commands against the fake


def docs_runs() -> list[tuple[dict[str, str], list[str]]]:
    """Every colibri-router command of every shell block and host config, once each, in order."""
    runs: list[tuple[dict[str, str], list[str]]] = []
    for _, _, language, body in BLOCKS:
        if language in SHELLS:
            check_shell(body, runs, language)
    unique: dict[str, tuple[dict[str, str], list[str]]] = {}
    for assignments, arguments in runs:
        unique.setdefault(json.dumps([assignments, arguments]), (assignments, arguments))
    return list(unique.values())


def subcommand(arguments: list[str]) -> str:
    if arguments[:1] == ["--version"]:
        return "version"
    if not arguments or arguments[0].startswith("-"):
        return "serve"
    if arguments[0] == "serve" and "--http" in arguments:
        return "serve --http"
    return arguments[0]


def fake_env(fake: FakeUpstream, tmp_path: Path) -> dict[str, str]:
    """Every provider keyed and on the fake (Gemini, Cohere and Ollama too), state and tokens in tmp."""
    env = every_provider_env(fake)
    for name, variable_value in (("gemini", "GOOGLE_API_KEY"), ("cohere", "CO_API_KEY")):
        env[BUILTIN[name].base_url_env] = fake.base_url(name)
        env[variable_value] = f"sk-{name}-docs-0123456789"
    env[BUILTIN["ollama"].base_url_env] = fake.base_url("ollama")
    env["COLIBRI_HTTP_TOKENS_FILE"] = str(tmp_path / "tokens")
    return env


def runnable_arguments(arguments: list[str], tmp_path: Path) -> list[str]:
    """``run`` is run with ``--dry-run`` (the scenarios load and validate, their plan prints; running them
    needs scripted model answers: tests/testing/test_agent_examples.py does that), its globs expanded
    from the repository root as a shell would, and a recording to replay created empty. A file named
    with ``--file`` is made in the working directory the command runs in."""
    for position, word in enumerate(arguments[:-1]):
        if word == "--file":  # a file the example names: the user's, so made here (the workspace is cwd)
            named = tmp_path / arguments[position + 1]
            named.parent.mkdir(parents=True, exist_ok=True)
            named.write_text("ALTER TABLE users ADD COLUMN note text;\n")
    if arguments[:1] != ["run"]:
        return arguments
    expanded: list[str] = []
    for word in arguments[1:]:
        matches = sorted(glob.glob(str(ROOT / word))) if not word.startswith("-") else []
        expanded.extend(matches or [word])
    if "--replay" in expanded:
        (tmp_path / expanded[expanded.index("--replay") + 1]).touch()
    return ["run", *expanded, "--dry-run"]


def test_the_runnable_commands_run_against_the_fake(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    runs = docs_runs()
    names = {subcommand(arguments) for _, arguments in runs}
    assert names >= RUNNABLE, f"the docs run no {sorted(RUNNABLE - names)}"
    env = fake_env(fake_upstream, tmp_path)
    for assignments, arguments in runs:
        name = subcommand(arguments)
        if name in PARSED_ONLY:
            continue
        assert name in RUNNABLE, f"colibri-router {name}: neither run nor listed in PARSED_ONLY with a reason"
        assert set(assignments) <= KEY_VARIABLES, f"{assignments}: only keys may be set on a docs command line"
        command = [CLI, *runnable_arguments(arguments, tmp_path)]
        run_env = {**env, **assignments}
        done = subprocess.run(
            command, check=False, env=run_env, cwd=tmp_path, input="", capture_output=True, text=True, timeout=120
        )
        shown = shlex.join(["colibri-router", *arguments])
        assert done.returncode == 0, f"{shown} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        assert not any(value in done.stdout + done.stderr for value in assignments.values() if len(value) > 8)
    assert not fake_upstream.violations


def test_the_python_examples_run_against_the_fake(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    examples = [body for _, _, language, body in BLOCKS if language == "python"]
    assert examples
    env = fake_env(fake_upstream, tmp_path)
    for body in examples:
        done = subprocess.run(
            [sys.executable, "-c", body], check=False, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0 and done.stdout.strip(), done.stdout + done.stderr
    assert fake_upstream.requests and not fake_upstream.violations


def test_the_python_examples_without_a_key_end_in_a_coded_error_not_a_traceback(tmp_path: Path) -> None:
    # A newcomer runs the example before setting a key: one line naming the code and the variable.
    examples = [body for _, _, language, body in BLOCKS if language == "python"]
    env = {"PATH": os.environ.get("PATH", ""), "COLIBRI_STATE_DIR": str(tmp_path / "state")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    for body in examples:
        done = subprocess.run(
            [sys.executable, "-c", body], check=False, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 1, done.stdout + done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        assert re.fullmatch(r"[A-Z_]+_CONFIG_ERROR: .*[A-Z_]+_API_KEY.*\n", done.stderr), done.stderr


# ---------------------------------------------------------------------------------------------------------
# The checker itself: what it must refuse


@pytest.mark.parametrize(
    ("language", "body"),
    [
        ("bash", "colibri-router call --no-such-flag hi\n"),
        ("bash", "uvx colibri-router frobnicate\n"),
        ("bash", "export COLIBRI_NO_SUCH_SETTING=1\n"),
        ("bash", "COLIBRI_TIMEOUT=3 colibri-router call hi\n"),
        ("bash", "rm -rf build\n"),
        ("bash", "uv run python -m colibri_router.no_such_module\n"),
        ("bash", "claude mcp add colibri-router --env KIMI_KEY=x -- uvx colibri-router\n"),
        ("json", '{"mcpServers": {"colibri-router": {"command": "uvx", "args": ["colibri-router", "--bogus"]}}}'),
        ("json", '{"mcpServers": {"c": {"command": "uvx", "args": ["colibri-router"], "env": {"KIMI_KEY": "x"}}}}'),
        ("json", '{"servers": {"colibri-router": {"command": "uvx", "args": ["colibri-router"]}}}'),
        ("json", '{"mcpServers": {"c": {"command": "uvx", "args": ["colibri-router"], "env": {"CO_API_KEY": "$K"}}}}'),
        (
            "json",
            '{"servers": {"c": {"type": "stdio", "command": "uvx", "args": ["colibri-router"],'
            ' "env": {"CO_API_KEY": "${input:k}"}}}}',
        ),
        ("json", '{"prompt": "hi", "max_tokens": 0}'),
        ("json", '{"provider": "kimi", "contents": "x"}'),
        ("toml", '[mcp_servers.colibri-router]\ncommand = "uvx"\nargs = ["colibri-router"]\nstartup_timeout = 60\n'),
        ("toml", '[providers.box]\nwire = "carrier-pigeon"\nbase_url = "http://box/v1"\n'),
        ("toml", '[provider.box]\nwire = "openai"\n'),
        ("toml", "[members.kim]\nrmp = 10\n"),
    ],
)
def test_the_checker_refuses_what_the_code_would(language: str, body: str) -> None:
    from colibri_router.errors import ConfigError

    # AssertionError: the checker's own rules; ValueError: pydantic's validation; ConfigError: the loader.
    with pytest.raises((AssertionError, ValueError, ConfigError)):
        CHECKERS[language](body, [])


# ---------------------------------------------------------------------------------------------------------
# Links


_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def without_code(text: str) -> str:
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set[str]:
    """The heading slugs of a Markdown file (GitHub's and mkdocs' rule for plain headings)."""
    found = set()
    for match in re.finditer(r"^#{1,6} (.+)$", without_code_blocks(path.read_text()), re.MULTILINE):
        heading = match.group(1).strip().lower().replace("`", "")
        found.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
    return found


def without_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def broken_links(source: Path, text: str) -> list[str]:
    """The relative links of a page that reach no file, or no heading of the Markdown file they name."""
    broken = []
    for target in _LINK.findall(without_code(text)):
        if re.match(r"[a-z]+:", target):
            continue
        path_part, _, anchor = target.partition("#")
        path = (source.parent / path_part).resolve() if path_part else source
        if not path.exists() or (anchor and (path.suffix != ".md" or anchor not in anchors(path))):
            broken.append(target)
    return broken


@pytest.mark.parametrize("name", page_names())
def test_every_relative_link_reaches_a_file_and_heading(name: str) -> None:
    assert not broken_links(page_path(name), page(name))


def test_the_readme_links_every_page() -> None:
    targets = {target.partition("#")[0] for target in _LINK.findall(without_code(page("README.md")))}
    assert {f"docs/{path.name}" for path in DOCS.glob("*.md")} <= targets


def test_the_link_check_notices_a_missing_file_or_heading(tmp_path: Path) -> None:
    source = tmp_path / "page.md"
    source.write_text("# Title\n\n## A part\n")
    (tmp_path / "other.md").write_text("# Other\n")
    text = (
        "[a](#a-part) [b](other.md) [c](#nope) [d](missing.md) [e](other.md#a-part) `[f](nope.md)` [g](https://x.org/y)"
    )
    assert broken_links(source, text) == ["#nope", "missing.md", "other.md#a-part"]


def test_every_tool_the_server_publishes_has_its_page_or_row() -> None:
    published = json.loads((ROOT / "src" / "colibri_router" / "server" / "tool_schemas.json").read_text())
    documented = {"router_call": page("tools.md"), "router_ask_many": page("ask-many.md")}
    for tool in published:
        where = documented.get(tool)
        if where is not None:
            assert where.startswith("# ") and f"`{tool}`" in where.splitlines()[0], tool
        else:
            assert f"| `{tool}` |" in page("other-tools.md"), f"docs/other-tools.md has no row for {tool}"


# ---------------------------------------------------------------------------------------------------------
# The README's install line, the site


def test_the_install_line_uses_the_projects_repository() -> None:
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    readme = page("README.md")
    assert f"uvx --from git+{repository} colibri-router" in readme
    assert yaml.safe_load((ROOT / "mkdocs.yml").read_text())["repo_url"] == repository


def test_the_sites_landing_page_includes_readme_sections_that_exist() -> None:
    readme = page("README.md")
    included = re.findall(r'^--8<-- "README\.md:([\w-]+)"$', page("index.md"), re.MULTILINE)
    assert included
    for section in included:
        assert f"--8<-- [start:{section}]" in readme and f"--8<-- [end:{section}]" in readme, section


def test_ci_builds_the_site_strictly() -> None:
    document = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    commands = [" ".join(step.get("run", "").split()) for step in document["jobs"]["docs"]["steps"]]
    assert "uv sync --locked" in commands
    assert any(command.startswith("uv run mkdocs build --strict") for command in commands)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: every page in the nav, every link and anchor resolved, offline."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(tmp_path)],
        check=False,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    landing = (tmp_path / "index.html").read_text()
    assert "router_ask_many" in landing and "colibri-router doctor" in landing  # the README's sections
    built = {path.relative_to(tmp_path).parts[0] for path in tmp_path.glob("*/index.html")}
    assert built >= {path.stem for path in DOCS.glob("*.md") if path.stem != "index"}
