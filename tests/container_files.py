"""Reading the container files for the tests: the Dockerfile's instructions by stage, compose.yaml.

Docker itself is not needed (nor present where the suite runs): the Dockerfile is read the way its
reference describes (a parser directive or comment line starts with ``#``, a trailing ``\\`` continues
an instruction, exec form is a JSON array), enough to check the facts the image relies on.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parents[1]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE_FILE = ROOT / "compose.yaml"
DOCKERIGNORE = ROOT / ".dockerignore"


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper-cased: FROM, RUN, COPY...
    arguments: str  # the rest, continuations joined with a space

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form instruction (``CMD ["a", "b"]``), None for shell form."""
        text = self.arguments.strip()
        if not text.startswith("["):
            return None
        value = json.loads(text)
        assert isinstance(value, list) and all(isinstance(item, str) for item in value), text
        return value


@dataclass
class Stage:
    base: str  # the FROM image, with ARG defaults substituted
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [instruction for instruction in self.instructions if instruction.keyword == keyword]

    def last(self, keyword: str) -> Instruction | None:
        found = self.all(keyword)
        return found[-1] if found else None


def instructions(text: str) -> list[Instruction]:
    found: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):  # comments inside a continued instruction are dropped
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        found.append(Instruction(keyword.upper(), arguments.strip()))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return found


def stages(path: Path = DOCKERFILE) -> list[Stage]:
    """The Dockerfile's build stages, in order; global ARG defaults are substituted into FROM."""
    arguments: dict[str, str] = {}
    found: list[Stage] = []
    for instruction in instructions(path.read_text()):
        if instruction.keyword == "ARG" and not found:
            name, _, default = instruction.arguments.partition("=")
            arguments[name.strip()] = default.strip()
            continue
        if instruction.keyword == "FROM":
            words = instruction.arguments.split()
            words = [word for word in words if not word.startswith("--platform=")]
            base = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: arguments.get(m.group(1) or m.group(2), ""), words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            found.append(Stage(base=base, name=name))
            continue
        assert found, f"{instruction.keyword} before the first FROM"
        found[-1].instructions.append(instruction)
    return found


def env_names(instruction: Instruction) -> list[str]:
    """The variables an ``ENV`` (``A=1 B=2``, or the legacy ``A 1``) or ``ARG`` sets."""
    if instruction.keyword == "ARG" or "=" not in instruction.arguments.split()[0]:
        return [instruction.arguments.split()[0].split("=")[0]]
    return [word.split("=", 1)[0] for word in shlex.split(instruction.arguments)]


def image_command(stage: Stage) -> list[str]:
    """ENTRYPOINT + CMD of ``stage``, both in exec form."""
    entrypoint, command = stage.last("ENTRYPOINT"), stage.last("CMD")
    entry = entrypoint.exec_form() if entrypoint else []
    rest = command.exec_form() if command else []
    assert entry is not None and rest is not None, "ENTRYPOINT and CMD must be in exec form (signals reach the server)"
    return [*entry, *rest]


def healthcheck_command(stage: Stage) -> list[str]:
    """The exec-form command of ``stage``'s HEALTHCHECK (its options dropped)."""
    healthcheck = stage.last("HEALTHCHECK")
    assert healthcheck is not None, "no HEALTHCHECK"
    _, cmd, form = healthcheck.arguments.partition("CMD ")
    assert cmd, "HEALTHCHECK without CMD"
    command = Instruction("CMD", form).exec_form()
    assert command is not None, "the HEALTHCHECK command must be in exec form (no shell in between)"
    return command


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE_FILE.read_text())
    return document


def compose_service(name: str) -> dict[str, Any]:
    service: dict[str, Any] = compose()["services"][name]
    return service


def bind_mounts(service: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(source, target, mode) of each short-syntax volume of ``service``; mode "rw" unless given."""
    mounts = []
    for volume in service.get("volumes", []):
        assert isinstance(volume, str), "use the short syntax: source:target[:mode]"
        source, target, *mode = volume.split(":")
        mounts.append((source, target, mode[0] if mode else "rw"))
    return mounts
