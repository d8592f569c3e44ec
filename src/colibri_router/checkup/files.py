"""The files and variables that configure everything else: the env file (``COLIBRI_ENV_FILE``), the
``COLIBRI_*`` settings, and the config file (``COLIBRI_CONFIG`` or the default path).

An env file line that cannot be parsed is reported by its number only: its text may hold a key."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

from colibri_router.checkup import Section
from colibri_router.errors import ConfigError
from colibri_router.providers.config import config_path, load_config
from colibri_router.providers.registry import BUILTIN
from colibri_router.settings import load_settings


def env_file() -> tuple[Section, dict[str, int]]:
    """The env file's section, and the line each variable it sets is on."""
    configured = os.environ.get("COLIBRI_ENV_FILE")
    if not configured:
        unread = " (the .env in this directory is not read)" if Path(".env").is_file() else ""
        return Section("env file", "off", f"none: COLIBRI_ENV_FILE is unset{unread}", {"path": None}), {}
    path = Path(configured).expanduser()
    section = Section("env file", "ok", str(path), {"path": str(path), "variables": 0})
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        section.summary = f"{path}: cannot be read"
        section.fail(f"COLIBRI_ENV_FILE points at {str(path)!r}, which cannot be read: {reason}")
        return section, {}
    from dotenv.parser import parse_stream

    lines: dict[str, int] = {}
    bad: list[int] = []
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            bad.append(binding.original.line)
        elif binding.key:
            lines[binding.key] = binding.original.line
    section.fields["variables"] = len(lines)
    section.summary = f"{path}: {len(lines)} variable{'s' if len(lines) != 1 else ''}"
    for line in bad:
        section.fail(f"env file {str(path)!r} line {line}: cannot be parsed (expected NAME=value); it is ignored")
    return section, lines


def settings(env_lines: dict[str, int]) -> Section:
    """The ``COLIBRI_*`` settings as a call reads them; a bad value named with its env file line."""

    try:
        load_settings()
    except ConfigError as error:
        message = error.message
        for name, line in env_lines.items():
            if name in message and not os.environ.get(name):
                message += f" ({name} is set in the env file, line {line})"
        section = Section("settings", "ok", "invalid")
        section.fail(message)
        return section
    return Section("settings", "ok", "valid")


def config_file() -> Section:
    """Which config file is read, and what it adds (or why every call would fail)."""

    path = config_path()
    explicit = bool(os.environ.get("COLIBRI_CONFIG"))
    if not explicit and not path.exists():
        return Section("config file", "off", f"none ({path} does not exist)", {"path": None})
    section = Section("config file", "ok", str(path), {"path": str(path)})
    try:
        config = load_config(frozenset(BUILTIN))
    except ConfigError as error:
        section.summary = f"{path}: invalid"
        section.fail(error.message + _table_line(path, error.message))
        return section
    names = [spec.name for spec in config.providers]
    section.fields.update(providers=names, aliases=len(config.aliases), fallback=list(config.fallback))
    section.summary = (
        f"{path}: {len(names)} provider{'s' if len(names) != 1 else ''}, "
        f"{len(config.aliases)} alias{'es' if len(config.aliases) != 1 else ''}"
        + (f", fallback {' → '.join(config.fallback)}" if config.fallback else "")
    )
    return section


_TABLE_NAMED = re.compile(r", \[([^\]]+)\]: ")


def _table_line(path: Path, message: str) -> str:
    """`` (line N)`` for a problem in a table the message names (a TOML error already has its line)."""
    named = _TABLE_NAMED.search(message)
    if named is None:
        return ""
    header = re.compile(rf"\s*\[\s*{re.escape(named.group(1))}\s*\]")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    number = next((n for n, line in enumerate(lines, start=1) if header.match(line)), None)
    return f" (line {number})" if number is not None else ""
