"""Install a built wheel into a fresh venv and check that it runs, from the installed copy.

Run by .github/workflows/release.yml on the wheel it is about to publish, and by the test suite
(tests/test_wheel.py) on a wheel it builds:

    python .ci/smoke_wheel.py dist/colibri_router-0.1.0-py3-none-any.whl --venv /tmp/smoke
        [--requirements pylock.toml] [--offline] [--python PYTHON]

With ``--requirements`` (a lock exported by ``uv export``) the dependencies are installed from it
and the wheel with ``--no-deps``, then ``uv pip check`` proves the wheel's requirements are met;
without it uv resolves the wheel's requirements from the index, as a user's install does.

Checks, each from the venv and outside the repository: ``colibri-router --version`` prints
``colibri-router <the wheel's version>``; serving on stdio with stdin closed says the hello line
(a structured log line on stderr carrying the version) and exits 0; the package is imported from the
venv, carries server.json in its metadata with the same version, and prices a call from the price
data bundled with genai-prices, offline. Standard library only; needs ``uv`` on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HELLO_EVENT = "serving MCP on stdio, waiting for a host"
# Run inside the venv: where the package was imported from, the metadata's server.json versions,
# and the price of a known model from the bundled price data.
_INSIDE = """
import json, sys
from importlib.metadata import distribution
import colibri_router
from colibri_router.pricing import TokenCounts, price_call
server = json.loads(distribution("colibri-router").read_text("extra_metadata/server.json"))
price = price_call("anthropic", "claude-sonnet-4-5", TokenCounts(input_tokens=1000, output_tokens=1000))
print(json.dumps({
    "file": colibri_router.__file__,
    "version": colibri_router.__version__,
    "server_json": [server["version"], *(package["version"] for package in server["packages"])],
    "cost_usd": price.cost_usd,
    "price_source": price.source,
}))
"""


class SmokeError(Exception):
    """The installed wheel did not behave."""


def wheel_version(wheel: Path) -> str:
    # Wheel file names are {name}-{version}-{tags}.whl (the name has no dash once normalized).
    return wheel.name.split("-")[1]


def venv_bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / (f"{name}.exe" if os.name == "nt" else name)


def clean_environment(home: Path) -> dict[str, str]:
    """Only PATH and the platform's basics: no provider keys, no COLIBRI_* settings, no PYTHONPATH,
    state and config in a scratch directory."""
    keep = {"PATH", "SYSTEMROOT", "TEMP", "TMP", "TMPDIR", "LANG", "UV_CACHE_DIR", "UV_INDEX_URL"}
    env = {name: value for name, value in os.environ.items() if name in keep}
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        COLIBRI_STATE_DIR=str(home / "state"),
    )
    return env


def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        raise SmokeError(f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result  # type: ignore[no-any-return]


def install(wheel: Path, venv: Path, python: str, requirements: Path | None, offline: bool) -> Path:
    uv_flags = ["--offline"] if offline else []
    run(["uv", "venv", "--quiet", *uv_flags, "--python", python, str(venv)])
    interpreter = venv_bin(venv, "python")
    target = ["--python", str(interpreter)]
    if requirements is not None:
        run(["uv", "pip", "install", "--quiet", *uv_flags, *target, "-r", str(requirements)])
        run(["uv", "pip", "install", "--quiet", *uv_flags, *target, "--no-deps", str(wheel)])
    else:
        run(["uv", "pip", "install", "--quiet", *uv_flags, *target, str(wheel)])
    run(["uv", "pip", "check", "--quiet", *uv_flags, *target])
    return interpreter


def check(wheel: Path, venv: Path, interpreter: Path) -> dict[str, object]:
    """The installed wheel's behaviour; raises SmokeError on the first thing wrong."""
    version = wheel_version(wheel)
    command = str(venv_bin(venv, "colibri-router"))
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        env = clean_environment(home)
        printed = run([command, "--version"], cwd=scratch, env=env).stdout.strip()
        if printed != f"colibri-router {version}":
            raise SmokeError(f"--version printed {printed!r}, expected 'colibri-router {version}'")
        served = run([command], cwd=scratch, env=env, stdin=subprocess.DEVNULL)
        hello = [json.loads(line) for line in served.stderr.splitlines() if HELLO_EVENT in line]
        if len(hello) != 1 or hello[0].get("version") != version:
            raise SmokeError(f"no hello line with version {version} on stderr:\n{served.stderr}")
        if served.stdout:
            raise SmokeError(f"stdout (the JSON-RPC channel) carried text with no host attached: {served.stdout!r}")
        facts: dict[str, object] = json.loads(run([str(interpreter), "-c", _INSIDE], cwd=scratch, env=env).stdout)
    if not Path(str(facts["file"])).resolve().is_relative_to(venv.resolve()):
        raise SmokeError(f"colibri_router was imported from {facts['file']}, not from the venv {venv}")
    if facts["version"] != version or facts["server_json"] != [version, version]:
        raise SmokeError(f"installed versions disagree with the wheel's {version}: {facts}")
    cost = facts["cost_usd"]
    if not isinstance(cost, float) or cost <= 0 or not str(facts["price_source"]).startswith("genai-prices "):
        raise SmokeError(f"no price from genai-prices' bundled data: {facts}")
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--venv", type=Path, required=True, help="where to create the fresh venv (must not exist)")
    parser.add_argument("--requirements", type=Path, help="install the dependencies from this lock")
    parser.add_argument("--offline", action="store_true", help="install from uv's cache only")
    parser.add_argument("--python", default=sys.executable, help="the interpreter for the venv (default: this one)")
    args = parser.parse_args(argv)
    try:
        interpreter = install(args.wheel, args.venv, args.python, args.requirements, args.offline)
        facts = check(args.wheel, args.venv, interpreter)
    except SmokeError as error:
        sys.stderr.write(f"smoke test failed: {error}\n")
        return 1
    sys.stderr.write(f"smoke test passed: {args.wheel.name} runs from {args.venv} ({json.dumps(facts)})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
