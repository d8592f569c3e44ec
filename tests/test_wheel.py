"""The sdist and wheel `uv build` makes: what the wheel carries, and that it installs into a fresh
venv and runs (``.ci/smoke_wheel.py``, the same check the release workflow runs before publishing).

Offline: uv builds with the build backend from its cache and installs the locked dependencies from
the cache too (``uv sync`` put both there), so nothing but the package index's cached files is used.
Marked ``wheel`` (a few seconds): ``-m 'not wheel'`` skips it.
"""

from __future__ import annotations

import email
import email.policy
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

pytestmark = pytest.mark.wheel


def uv(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["uv", *args], cwd=cwd, capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, f"uv {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # The wheel is built from the sdist, as a user installing the sdist would build it.
    uv("build", "--offline", "--quiet", "--out-dir", str(out))
    return out


def project_version() -> str:
    import tomllib

    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def the_wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def wheel_metadata(wheel: Path) -> email.message.EmailMessage:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name), policy=email.policy.default)  # type: ignore[return-value]


def test_build_makes_one_sdist_and_one_wheel_of_this_version(dist: Path) -> None:
    version = project_version()
    assert sorted(path.name for path in dist.iterdir() if path.suffix in {".whl", ".gz"}) == [
        f"colibri_router-{version}-py3-none-any.whl",
        f"colibri_router-{version}.tar.gz",
    ]


def test_the_wheel_carries_server_json_and_the_tool_schemas(dist: Path) -> None:
    version = project_version()
    with zipfile.ZipFile(the_wheel(dist)) as archive:
        names = set(archive.namelist())
        server = archive.read(f"colibri_router-{version}.dist-info/extra_metadata/server.json")
        schemas = archive.read("colibri_router/server/tool_schemas.json")
    assert server == (ROOT / "server.json").read_bytes()
    assert schemas == (ROOT / "src/colibri_router/server/tool_schemas.json").read_bytes()
    assert json.loads(schemas)  # the file the server publishes its tools' schemas from
    sources = {str(path.relative_to(ROOT / "src")) for path in (ROOT / "src").rglob("*.py")}
    assert sources <= names, f"modules missing from the wheel: {sorted(sources - names)}"
    assert not [name for name in names if name.startswith(("tests/", "benchmarks/"))]


def test_the_wheel_and_the_sdist_carry_the_mit_license(dist: Path) -> None:
    # The README, pyproject.toml and the Dockerfile say MIT: the licence text itself travels with both.
    version = project_version()
    text = (ROOT / "LICENSE").read_bytes()
    assert text.startswith(b"MIT License") and b"colibri-router contributors" in text
    with zipfile.ZipFile(the_wheel(dist)) as archive:
        assert archive.read(f"colibri_router-{version}.dist-info/licenses/LICENSE") == text
    metadata = wheel_metadata(the_wheel(dist))
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    with tarfile.open(dist / f"colibri_router-{version}.tar.gz") as sdist:
        member = sdist.extractfile(f"colibri_router-{version}/LICENSE")
        assert member is not None and member.read() == text


def test_the_price_data_comes_with_the_wheels_requirements(dist: Path) -> None:
    # Prices come from the data bundled inside the genai-prices package (src/colibri_router/pricing.py
    # has no data file of its own), so the wheel must require it; the smoke test prices a call.
    metadata = wheel_metadata(the_wheel(dist))
    requirements = metadata.get_all("Requires-Dist") or []
    assert any(re.match(r"genai-prices\b", requirement) for requirement in requirements), requirements
    assert "postgres" in (metadata.get_all("Provides-Extra") or [])
    assert any(re.match(r"asyncpg\b.*extra == ['\"]postgres['\"]", requirement) for requirement in requirements)
    assert not list((ROOT / "src" / "colibri_router").rglob("*price*.json"))


def test_the_wheel_description_proves_the_registry_name(dist: Path) -> None:
    # The MCP registry accepts server.json only when the PyPI description holds "mcp-name: <name>".
    name = json.loads((ROOT / "server.json").read_text())["name"]
    description = wheel_metadata(the_wheel(dist)).get_payload()
    assert isinstance(description, str)
    assert re.search(rf"mcp-name: {re.escape(name)}(\s|-->|<)", description)


def test_the_sdist_holds_what_the_wheel_is_built_from(dist: Path) -> None:
    version = project_version()
    with tarfile.open(dist / f"colibri_router-{version}.tar.gz") as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    schemas = "src/colibri_router/server/tool_schemas.json"
    needed = {"pyproject.toml", "README.md", "server.json", "CHANGELOG.md", schemas}
    assert needed <= names, sorted(needed - names)


def test_the_wheel_installs_into_a_fresh_venv_and_runs(dist: Path, tmp_path: Path) -> None:
    lock = tmp_path / "pylock.toml"
    uv("export", "--frozen", "--no-dev", "--no-emit-project", "--format", "pylock.toml", "--quiet", "-o", str(lock))
    command = [sys.executable, str(ROOT / ".ci" / "smoke_wheel.py"), str(the_wheel(dist))]
    command += ["--venv", str(tmp_path / "venv"), "--requirements", str(lock), "--offline"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "smoke test passed" in result.stderr
