"""The container for the team server, checked without Docker: the Dockerfile's facts (two stages,
a slim Python base, the postgres extra, a non-root user, a healthcheck on /healthz, the serve
command, nothing secret baked in), .dockerignore, compose.yaml (colibri-router with PostgreSQL, a
volume for the data, the tokens file read-only) and the team page's ``docker compose`` block (docs/team-server.md).

The image's command and healthcheck are run for real, against PostgreSQL, by
tests/e2e/test_container_command.py.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from container_files import (
    COMPOSE_FILE,
    DOCKERIGNORE,
    ROOT,
    bind_mounts,
    compose,
    compose_service,
    env_names,
    healthcheck_command,
    image_command,
    instructions,
    stages,
)
from docs_pages import page
from test_packaging import SECRET_VARIABLES, expected_variables

SERVER_NAME = json.loads((ROOT / "server.json").read_text())["name"]
SECRET_WORDS = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------------------
# Dockerfile


def test_the_dockerfile_builds_in_a_builder_stage_onto_slim_python() -> None:
    builder, final = stages()
    assert builder.name == "builder"
    assert re.fullmatch(r"python:3\.1[1-9]-slim", builder.base), builder.base
    assert final.base == builder.base  # the venv's interpreter path is the same in both
    copies = [instruction.arguments for instruction in final.all("COPY")]
    assert copies == ["--from=builder /opt/colibri /opt/colibri"], "the final image takes the venv only"
    assert not final.all("ADD")


def test_the_builder_installs_the_built_wheel_with_the_postgres_extra_from_the_lock() -> None:
    builder, _ = stages()
    runs = " ".join(instruction.arguments for instruction in builder.all("RUN"))
    assert "uv export --frozen --no-dev --no-emit-project --extra postgres" in runs
    assert "--require-hashes" in runs
    assert "uv build --wheel" in runs
    assert re.search(r'uv pip install .*"\$\(ls /tmp/dist/colibri_router-\*\.whl\)\[postgres\]"', runs)
    assert "uv pip check" in runs


def test_only_what_the_build_needs_is_copied_in() -> None:
    copied = [
        word
        for stage in stages()
        for instruction in stage.all("COPY")
        if not instruction.arguments.startswith("--from=")
        for word in instruction.arguments.split()[:-1]
    ]
    assert sorted(copied) == ["README.md", "pyproject.toml", "server.json", "src", "uv.lock"]


def test_the_server_runs_as_a_user_that_is_not_root() -> None:
    _, final = stages()
    user = final.last("USER")
    assert user is not None, "no USER: the server would run as root"
    uid, _, gid = user.arguments.partition(":")
    assert uid.isdigit() and int(uid) > 0 and (not gid or int(gid) > 0), user.arguments
    runs = " ".join(instruction.arguments for instruction in final.all("RUN"))
    assert f"useradd --system --uid {uid} " in runs  # the user exists, with a home for its state
    # USER comes after every RUN: nothing after it needs root, and no later instruction resets it.
    positions = [index for index, instruction in enumerate(final.instructions) if instruction.keyword == "RUN"]
    assert max(positions) < final.instructions.index(user)


def served_port() -> str:
    _, final = stages()
    command = image_command(final)
    return command[command.index("--port") + 1]


def test_the_command_serves_http_on_every_interface() -> None:
    _, final = stages()
    command = image_command(final)
    assert command == ["colibri-router", "serve", "--http", "--host", "0.0.0.0", "--port", served_port()]
    assert [instruction.arguments for instruction in final.all("EXPOSE")] == [served_port()]


def test_the_healthcheck_asks_healthz_with_python_alone() -> None:
    _, final = stages()
    command = healthcheck_command(final)
    assert command[:2] == ["python", "-c"]
    assert "urllib.request" in command[2]
    assert f"http://127.0.0.1:{served_port()}/healthz" in command[2]
    compile(command[2], "HEALTHCHECK", "exec")  # valid Python
    options = final.last("HEALTHCHECK")
    assert options is not None
    assert re.search(r"--interval=\d+s", options.arguments) and re.search(r"--timeout=\d+s", options.arguments)


def test_nothing_secret_is_baked_into_the_image() -> None:
    settings = expected_variables()
    for stage in stages():
        for instruction in [*stage.all("ENV"), *stage.all("ARG")]:
            for name in env_names(instruction):
                # The deployment's settings, keys included, come from the environment at run time.
                assert name not in settings, f"{instruction.keyword} {name} in the image"
                assert not SECRET_WORDS.search(name), f"{instruction.keyword} {name} in the image"
    text = " ".join(i.arguments for stage in stages() for i in stage.instructions)  # comments may name them
    assert not re.search(r"sk-[A-Za-z0-9]|postgresql://\w+:[^@$]+@", text)
    assert not [name for name in SECRET_VARIABLES if name in text]


def test_the_image_carries_the_registry_name() -> None:
    _, final = stages()
    labels = " ".join(instruction.arguments for instruction in final.all("LABEL"))
    assert f'io.modelcontextprotocol.server.name="{SERVER_NAME}"' in labels


def test_the_dockerfile_parser_reads_continuations_and_exec_forms() -> None:
    parsed = instructions('# c\nFROM a AS b\nRUN x \\\n  # inner\n && y\nCMD ["p", "q"]\nENV A=1 B="2 3"\n')
    assert [(i.keyword, i.arguments) for i in parsed] == [
        ("FROM", "a AS b"),
        ("RUN", "x && y"),
        ("CMD", '["p", "q"]'),
        ("ENV", 'A=1 B="2 3"'),
    ]
    assert parsed[2].exec_form() == ["p", "q"] and parsed[1].exec_form() is None
    assert env_names(parsed[3]) == ["A", "B"]


# ---------------------------------------------------------------------------------------------------------
# .dockerignore


def ignored(path: str) -> bool:
    """Whether .dockerignore leaves ``path`` out of the build context (the last matching rule wins)."""
    excluded = False
    for line in DOCKERIGNORE.read_text().splitlines():
        rule = line.strip()
        if not rule or rule.startswith("#"):
            continue
        negated = rule.startswith("!")
        pattern = rule.removeprefix("!").removeprefix("**/")
        parts = path.split("/")
        if any(fnmatch.fnmatch("/".join(parts[: i + 1]), pattern) for i in range(len(parts))) or any(
            fnmatch.fnmatch(part, pattern) for part in parts
        ):
            excluded = not negated
    return excluded


def test_the_build_context_leaves_secrets_out_and_keeps_what_the_build_copies() -> None:
    for secret in (".env", ".env.production", "tokens", "team.tokens", ".venv/bin/python", ".git/config"):
        assert ignored(secret), secret
    for needed in ("pyproject.toml", "uv.lock", "README.md", "server.json", "src/colibri_router/cli.py"):
        assert not ignored(needed), needed
    assert not ignored("src/colibri_router/server/tool_schemas.json")


# ---------------------------------------------------------------------------------------------------------
# compose.yaml


def test_compose_starts_the_router_with_postgresql() -> None:
    assert set(compose()["services"]) == {"colibri-router", "postgres"}
    router = compose_service("colibri-router")
    assert router["build"] == "."
    assert router["env_file"] == ".env"
    assert router["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert router["ports"] == ["8000:8000"]
    postgres = compose_service("postgres")
    assert re.fullmatch(r"postgres:\d+(\.\d+)?", postgres["image"])
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]


def test_compose_keeps_the_data_in_a_named_volume() -> None:
    postgres = compose_service("postgres")
    ((source, target, mode),) = bind_mounts(postgres)
    assert target == "/var/lib/postgresql/data" and mode == "rw"
    assert source in compose()["volumes"], "the data volume is not a named volume"


def test_compose_mounts_the_tokens_file_read_only_where_the_setting_points() -> None:
    router = compose_service("colibri-router")
    ((source, target, mode),) = bind_mounts(router)
    assert source == "./tokens" and mode == "ro"
    assert router["environment"]["COLIBRI_HTTP_TOKENS_FILE"] == target
    assert router["environment"]["COLIBRI_HTTP_ALLOWED_HOSTS"] == "${COLIBRI_HTTP_ALLOWED_HOSTS:-localhost}"


def test_compose_points_the_router_at_its_database_and_holds_no_password() -> None:
    router, postgres = compose_service("colibri-router"), compose_service("postgres")
    url = router["environment"]["COLIBRI_DATABASE_URL"]
    user, database = postgres["environment"]["POSTGRES_USER"], postgres["environment"]["POSTGRES_DB"]
    password = "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD in .env}"
    assert url == f"postgresql://{user}:{password}@postgres:5432/{database}"
    assert postgres["environment"]["POSTGRES_PASSWORD"] == password
    for service in compose()["services"].values():
        for name, value in service.get("environment", {}).items():
            if name in SECRET_VARIABLES or "PASSWORD" in name:  # its secret part comes from .env
                assert "${" in str(value) and not re.search(r"://[^:]+:[^$@]+@", str(value)), name


def test_compose_sets_only_variables_the_server_reads() -> None:
    router = compose_service("colibri-router")
    assert set(router["environment"]) <= expected_variables()


# ---------------------------------------------------------------------------------------------------------
# docs/team-server.md: docker compose is the first way in


def compose_block() -> list[str]:
    """The commands of the first code block of "Run it for a team", continuations joined."""
    text = page("team-server.md")
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block, "the team section has no bash block"
    joined = block.group(1).replace("\\\n", " ")
    return [" ".join(line.split("#")[0].split()) for line in joined.splitlines() if line.split("#")[0].strip()]


def test_the_team_page_starts_with_docker_compose() -> None:
    text = page("team-server.md")
    commands = compose_block()
    assert "docker compose up -d" in commands
    assert text.index("docker compose up") < text.index("colibri-router serve --http --host")
    assert f"`{COMPOSE_FILE.name}`" in text
    assert commands[0] == "cp .env.example .env"


def test_the_readme_token_command_fits_the_compose_file(tmp_path: Path) -> None:
    (run,) = [command for command in compose_block() if command.startswith("docker compose run")]
    words = shlex.split(run)
    service_index = next(i for i, word in enumerate(words) if word in compose()["services"])
    options, service, command = words[3:service_index], words[service_index], words[service_index + 1 :]
    assert service == "colibri-router"
    assert "--no-deps" in options and "--rm" in options
    volume = options[options.index("--volume") + 1]
    environment = options[options.index("--env") + 1]
    source, target = volume.split(":")
    ((mounted, _, _),) = bind_mounts(compose_service(service))
    assert source == "$PWD/tokens" and mounted == "./tokens"  # the file the server mounts read-only
    assert environment == f"COLIBRI_HTTP_TOKENS_FILE={target}"
    assert any(c.startswith("touch tokens") for c in compose_block()), "the file must exist before it is mounted"
    # The command after the service name is the image's entrypoint's: run it here as the image would.
    tokens = tmp_path / "tokens"
    env = {"PATH": str(Path(sys.executable).parent), "COLIBRI_HTTP_TOKENS_FILE": str(tokens)}
    cli = str(Path(sys.executable).with_name("colibri-router"))
    result = subprocess.run([cli, *command], capture_output=True, text=True, env=env, check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    name = command[-1]
    assert re.fullmatch(rf"{re.escape(name)}:[0-9a-f]{{64}}\n", tokens.read_text())
    assert result.stdout.strip() and result.stdout.strip() not in tokens.read_text()


@pytest.mark.parametrize("line", ["docker compose up -d", "curl http://localhost:8000/healthz"])
def test_the_readme_block_has_the_start_and_the_check(line: str) -> None:
    assert line in compose_block()


# ---------------------------------------------------------------------------------------------------------
# `cp .env.example .env` then `docker compose up`: the variable contract, checked without Docker


def dotenv(path: Path) -> dict[str, str]:
    """What docker compose reads from a .env file: ``NAME=value`` lines, ``#`` lines are comments."""
    found = {}
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[?-])([^}]*))?\}")


def interpolate(value: str, variables: dict[str, str]) -> str:
    """Compose's ``${NAME}``, ``${NAME:-default}`` and ``${NAME:?error}`` (the last fails, as
    ``docker compose up`` does, when NAME is unset or empty)."""

    def one(match: re.Match[str]) -> str:
        name, operator, argument = match.groups()
        given = variables.get(name, "")
        if operator == ":?" and not given:
            raise AssertionError(f"docker compose up would fail: {argument or name + ' is required'}")
        if operator == ":-" and not given:
            return argument
        return given

    return REFERENCE.sub(one, value)


@pytest.fixture
def copied_env(tmp_path: Path) -> Path:
    """``cp .env.example .env``."""
    target = tmp_path / ".env"
    target.write_bytes((ROOT / ".env.example").read_bytes())
    return target


def test_a_copied_env_example_gives_compose_every_variable_it_requires(copied_env: Path) -> None:
    variables = dotenv(copied_env)
    text = COMPOSE_FILE.read_text()
    required = {name for name, operator, _ in REFERENCE.findall(text) if operator == ":?"}
    assert required == {"POSTGRES_PASSWORD"}
    for name in required:
        assert variables.get(name), f"{name} is missing or empty in .env.example"
    # Interpolated as compose would: the router's URL is a PostgreSQL URL whose password is that one.
    from urllib.parse import urlsplit

    router, postgres = compose_service("colibri-router"), compose_service("postgres")
    url = urlsplit(interpolate(router["environment"]["COLIBRI_DATABASE_URL"], variables))
    password = interpolate(postgres["environment"]["POSTGRES_PASSWORD"], variables)
    assert (url.scheme, url.hostname, url.port, url.password) == ("postgresql", "postgres", 5432, password)
    assert re.fullmatch(r"[A-Za-z0-9._~-]+", password), "the password goes into a URL unescaped"
    assert interpolate(router["environment"]["COLIBRI_HTTP_ALLOWED_HOSTS"], variables) == "localhost"


def test_interpolation_fails_where_compose_would() -> None:
    with pytest.raises(AssertionError, match="set POSTGRES_PASSWORD"):
        interpolate("${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD in .env}", {"POSTGRES_PASSWORD": ""})
    assert interpolate("${A:-x}/${B}", {"B": "b"}) == "x/b"


def test_a_copied_env_example_switches_on_no_local_server(copied_env: Path) -> None:
    # The copied file goes into the container (env_file): a local server's URL set there puts that
    # provider in use, and inside the container 127.0.0.1:8000 is the router itself.
    from colibri_router.providers import BUILTIN

    active = dotenv(copied_env)
    local = {spec.base_url_env for spec in BUILTIN.values() if spec.local}
    assert local and not local & set(active), sorted(local & set(active))


def test_doctor_on_a_copied_env_example_reports_no_local_provider_in_use(copied_env: Path, tmp_path: Path) -> None:
    # The container's environment: the .env's lines (env_file) with no key set; doctor says which
    # providers are in use, and none of the local servers may be.
    from colibri_router.providers import BUILTIN

    env = {key: value for key, value in dotenv(copied_env).items() if value}
    env |= {"PATH": str(Path(sys.executable).parent), "COLIBRI_STATE_DIR": str(tmp_path / "state")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    cli = str(Path(sys.executable).with_name("colibri-router"))
    done = subprocess.run(
        [cli, "doctor", "--json"], capture_output=True, text=True, env=env, check=False, timeout=60, cwd=tmp_path
    )
    document = json.loads(done.stdout)
    statuses = {entry["name"]: entry["status"] for entry in document["providers"]}
    local = sorted(spec.name for spec in BUILTIN.values() if spec.local)
    assert [statuses[name] for name in local] == ["off"] * len(local), statuses
    assert any("no provider has a key" in problem for problem in document["problems"])  # keys are to be filled in
