"""The release pipeline's facts, offline: one version everywhere, the changelog, the release gate
(``.ci/release_check.py``), and the two GitHub Actions workflows (parsed, never run here).

The wheel itself is built and run by tests/test_wheel.py.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

import colibri_router

ROOT = Path(__file__).parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
RELEASE_CHECK = ROOT / ".ci" / "release_check.py"


def project_version() -> str:
    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def workflow(name: str) -> dict[str, Any]:
    document: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    # YAML 1.1 reads the bare key `on` as the boolean true.
    if True in document:
        document["on"] = document.pop(True)
    return document


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = job["steps"]
    return found


def run_commands(job: dict[str, Any]) -> list[str]:
    """Each ``run`` line of a job, folded scalars joined into one command each."""
    commands = []
    for step in steps(job):
        for line in step.get("run", "").splitlines():
            if line.strip():
                commands.append(" ".join(line.split()))
    return commands


def uses(job: dict[str, Any]) -> list[str]:
    return [step["uses"] for step in steps(job) if "uses" in step]


def ci_run_commands() -> list[str]:
    """The uv commands .ci/run runs, in order, written as a workflow writes them."""
    return [
        " ".join(line.strip().replace('"${uv[@]}"', "uv").split())
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip().startswith('"${uv[@]}"')
    ]


# ---------------------------------------------------------------------------------------------------------
# One version, written once


def test_the_version_is_written_once_and_everything_follows_it() -> None:
    version = project_version()
    assert colibri_router.__version__ == importlib.metadata.version("colibri-router") == version
    assert '__version__ = "' not in (ROOT / "src" / "colibri_router" / "__init__.py").read_text()
    document = json.loads((ROOT / "server.json").read_text())
    assert [document["version"], *(package["version"] for package in document["packages"])] == [version, version]


def test_importing_the_package_does_not_look_the_version_up() -> None:
    # The lookup imports importlib.metadata and searches sys.path: it waits for the first use.
    probe = "import sys, colibri_router as c; print('importlib.metadata' in sys.modules, '__version__' in vars(c))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = colibri_router.nonsense  # type: ignore[attr-defined]


def test_the_version_flag_prints_the_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    from colibri_router.cli import main

    with pytest.raises(SystemExit) as ended:
        main(["--version"])
    assert ended.value.code == 0
    assert capsys.readouterr().out.strip() == f"colibri-router {project_version()}"


def test_the_readme_carries_the_registry_ownership_line() -> None:
    # The MCP registry reads "mcp-name: <server.json's name>" in the PyPI description (the README).
    name = json.loads((ROOT / "server.json").read_text())["name"]
    assert re.search(rf"mcp-name: {re.escape(name)}(\s|-->|<)", (ROOT / "README.md").read_text())


# ---------------------------------------------------------------------------------------------------------
# CHANGELOG.md (Keep a Changelog)

_VERSION_HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?$", re.MULTILINE)
_CHANGE_TYPES = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    headings = list(_VERSION_HEADING.finditer(text))
    assert headings[0].group("version") == "Unreleased" and headings[0].group("date") is None
    released = [heading.group("version") for heading in headings[1:]]
    assert released, "no released version"
    assert all(heading.group("date") for heading in headings[1:]), "a released version without its date"
    assert released[0] == project_version(), "the newest released section is not pyproject.toml's version"
    as_numbers = [tuple(int(part) for part in version.split(".")) for version in released]
    assert as_numbers == sorted(as_numbers, reverse=True), "versions are not newest first"
    for section in re.findall(r"^### (.+)$", text, re.MULTILINE):
        assert section in _CHANGE_TYPES, section
    for version in ["Unreleased", *released]:
        assert re.search(rf"^\[{re.escape(version)}\]: https://\S+$", text, re.MULTILINE), f"no link for {version}"


# ---------------------------------------------------------------------------------------------------------
# The release gate


def release_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(RELEASE_CHECK), *args], capture_output=True, text=True, check=False)


def test_the_release_check_passes_the_versions_tag_and_writes_its_notes(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    result = release_check(f"v{project_version()}", "--notes", str(notes))
    assert result.returncode == 0, result.stderr
    text = notes.read_text()
    assert text.startswith("The first release.") or text.startswith("### ")
    assert "## [" not in text and "]: https://" not in text


def test_the_release_check_refuses_another_tag() -> None:
    result = release_check("v99.0.0")
    assert result.returncode == 1
    assert f"tag 'v99.0.0' is not 'v' + pyproject.toml's version '{project_version()}'" in result.stderr


def test_the_release_check_names_every_file_that_disagrees(tmp_path: Path) -> None:
    for name in ("pyproject.toml", "server.json", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    server = json.loads((tmp_path / "server.json").read_text())
    server["packages"][0]["version"] = "0.0.9"
    (tmp_path / "server.json").write_text(json.dumps(server))
    changelog = (tmp_path / "CHANGELOG.md").read_text().replace(f"## [{project_version()}]", "## [0.0.8]")
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    result = release_check(f"v{project_version()}", "--root", str(tmp_path))
    assert result.returncode == 1
    assert "server.json's 'colibri-router' package version '0.0.9'" in result.stderr
    assert f"CHANGELOG.md has no '## [{project_version()}] - YYYY-MM-DD' section" in result.stderr


# ---------------------------------------------------------------------------------------------------------
# .github/workflows/ci.yml


def test_ci_runs_on_every_push_and_pull_request_with_read_only_permissions() -> None:
    document = workflow("ci.yml")
    assert set(document["on"]) == {"push", "pull_request"}
    assert document["on"]["push"] is None and document["on"]["pull_request"] is None  # no branch filter
    assert document["permissions"] == {"contents": "read"}


def test_ci_linux_runs_the_steps_of_ci_run_on_each_python() -> None:
    job = workflow("ci.yml")["jobs"]["linux"]
    assert job["runs-on"].startswith("ubuntu")
    assert job["strategy"]["matrix"]["python"] == ["3.11", "3.12", "3.13"]
    (setup,) = [step for step in steps(job) if step.get("uses", "").startswith("astral-sh/setup-uv@")]
    assert setup["with"]["python-version"] == "${{ matrix.python }}"
    commands = run_commands(job)
    uv_commands = [command for command in commands if command.startswith("uv ")]
    assert uv_commands == ci_run_commands()
    assert uv_commands[-1] == "uv run pytest"  # the README's test command, the whole suite
    assert any(re.search(r"apt-get install .*\bpostgresql\b", command) for command in commands)


def test_ci_runs_the_stdio_servers_tests_on_macos_and_windows_without_postgresql() -> None:
    job = workflow("ci.yml")["jobs"]["stdio"]
    assert set(job["strategy"]["matrix"]["os"]) == {"macos-latest", "windows-latest"}
    assert run_commands(job)[0] == "uv sync --locked"
    pytest_commands = [command for command in run_commands(job) if command.startswith("uv run pytest ")]
    assert len(pytest_commands) == 2
    postgres_users = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if re.search(r"\b(postgres_url|fresh_postgres_database|postgres_cluster)\b", path.read_text())
    }
    postgres_users |= {str(path.relative_to(ROOT)) for path in (ROOT / "tests" / "store").rglob("test_*.py")}
    for command in pytest_commands:
        words = shlex.split(command)[3:]
        paths = [word for word in words if not word.startswith("-")]
        ignored = {word.removeprefix("--ignore=") for word in words if word.startswith("--ignore=")}
        assert {"tests/unit", "tests/mcp", "tests/e2e"} <= set(paths)
        for path in [*paths, *ignored]:
            assert (ROOT / path).exists(), path
        selected = {
            str(test.relative_to(ROOT)) for path in paths for test in (ROOT / path).rglob("test_*.py")
        } - ignored
        assert not selected & postgres_users, f"PostgreSQL tests selected off Linux: {selected & postgres_users}"
        assert "tests/e2e/test_stdio_server.py" in selected


def test_every_action_is_pinned_to_a_release() -> None:
    pinned = re.compile(r"[\w.-]+/[\w.-]+@(v\d+(\.\d+){0,2}|release/v\d+)")
    for name in ("ci.yml", "release.yml"):
        for job_name, job in workflow(name)["jobs"].items():
            for action in uses(job):
                assert pinned.fullmatch(action), (name, job_name, action)


# ---------------------------------------------------------------------------------------------------------
# .github/workflows/release.yml


def test_release_runs_on_a_version_tag_with_read_only_defaults() -> None:
    document = workflow("release.yml")
    assert document["on"] == {"push": {"tags": ["v*"]}}
    assert document["permissions"] == {"contents": "read"}
    assert set(document["jobs"]) == {"build", "pypi", "github-release", "mcp-registry"}


def test_release_build_checks_the_tag_builds_checks_and_runs_the_wheel() -> None:
    job = workflow("release.yml")["jobs"]["build"]
    commands = run_commands(job)
    order = [
        'python3 .ci/release_check.py "$GITHUB_REF_NAME" --notes release-notes.md',
        "uv build",
        "uvx twine check --strict dist/*",
        'python3 .ci/smoke_wheel.py dist/*.whl --venv "$RUNNER_TEMP/smoke"',
    ]
    assert [command for command in commands if command in order] == order
    (upload,) = [step for step in steps(job) if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["with"]["path"].split() == ["dist/", "release-notes.md"]
    assert "permissions" not in job  # the workflow's read-only default


def test_release_publishes_to_pypi_by_trusted_publishing() -> None:
    job = workflow("release.yml")["jobs"]["pypi"]
    assert job["needs"] == "build"
    assert job["permissions"] == {"id-token": "write"}
    (publish,) = [step for step in steps(job) if step.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert set(publish.get("with", {})) <= {"packages-dir", "verbose", "print-hash"}  # no password, no token
    assert job["environment"]["name"] == "pypi"


def test_release_attaches_the_artifacts_to_the_github_release() -> None:
    job = workflow("release.yml")["jobs"]["github-release"]
    assert job["needs"] == "pypi"
    assert job["permissions"] == {"contents": "write"}
    (command,) = [command for command in run_commands(job) if command.startswith("gh release create")]
    assert '"$GITHUB_REF_NAME" dist/*' in command and "--notes-file release-notes.md" in command
    (step,) = [step for step in steps(job) if "run" in step]
    assert step["env"] == {"GH_TOKEN": "${{ github.token }}"}  # the run's own token, nothing stored


def test_release_publishes_server_json_with_the_registrys_publisher_after_pypi() -> None:
    job = workflow("release.yml")["jobs"]["mcp-registry"]
    assert job["needs"] == "pypi"  # the registry verifies the PyPI package, which must exist first
    assert job["permissions"] == {"contents": "read", "id-token": "write"}
    commands = run_commands(job)
    assert any("modelcontextprotocol/registry/releases/latest/download/mcp-publisher_" in c for c in commands)
    publisher = [command for command in commands if command.startswith("./mcp-publisher ")]
    assert publisher == [
        "./mcp-publisher validate server.json",
        "./mcp-publisher login github-oidc",
        "./mcp-publisher publish server.json",
    ]
    assert any("pypi.org/pypi/colibri-router/" in command for command in commands)


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_no_workflow_holds_or_reads_a_stored_secret(name: str) -> None:
    text = (WORKFLOWS / name).read_text()
    assert "secrets." not in text
    assert not re.search(r"\b(password|api-token|api_token)\s*:", text, re.IGNORECASE)
    assert not re.search(r"pypi-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}", text)
    # Only the jobs that publish may mint an OIDC token.
    for job_name, job in workflow(name)["jobs"].items():
        if job.get("permissions", {}).get("id-token") == "write":
            assert (name, job_name) in {("release.yml", "pypi"), ("release.yml", "mcp-registry")}


# ---------------------------------------------------------------------------------------------------------
# docs/releasing.md


def test_the_release_doc_names_the_current_version_and_runs_the_gate() -> None:
    text = (ROOT / "docs" / "releasing.md").read_text()
    version = project_version()
    mentioned = set(re.findall(r"\bv?(\d+\.\d+\.\d+)\b", text))
    assert mentioned == {version}, f"docs/releasing.md names {sorted(mentioned)}, the version is {version}"
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block
    gate = next(line for line in block.group(1).splitlines() if "release_check.py" in line)
    args = shlex.split(gate)
    assert args[:2] == ["python3", ".ci/release_check.py"]
    assert release_check(*args[2:]).returncode == 0
