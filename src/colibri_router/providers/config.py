"""The user's config file: custom providers as registry entries (TOML, read at call time).

Where: ``COLIBRI_CONFIG`` (a path; a missing file is an error), else
``$XDG_CONFIG_HOME/colibri-router/config.toml`` (``~/.config/...`` when unset) if it exists. The parsed
file is cached on its stat, like the env file. A malformed file or entry is a ``CONFIG_ERROR``
naming the file, the entry and the problem: every call fails with it until the file is fixed.

    [providers.gpu-box]
    wire = "openai"                      # openai | anthropic | gemini | cohere | ollama
    base_url = "http://gpu-box:8000/v1"
    api_key_env = "GPU_BOX_KEY"          # optional; the key itself never lives in the file; a list of
                                         # names pools their keys (each may hold several, comma-separated)
    default_model = "moonshotai/Kimi-K2-Instruct"
    models = ["moonshotai/Kimi-K2-Instruct"]   # names this provider claims
    headers = { "X-Title" = "colibri" }
    tools = true                         # false: its models take no tool definitions

    [aliases]
    fast = "groq:moonshotai/kimi-k2-instruct"   # <provider>:<model> or a bare model name

    [fallback]
    models = ["gpt-mini", "sonnet"]      # tried in order when a call fails in a way another model may not

    [routing]                            # where a turn goes when the model it names cannot read it
    vision = "gemini-flash"              # images, for a model that reads none (COLIBRI_VISION_MODEL wins)
    documents = "sonnet"                 # PDFs, for a model that would get only their text
    long_context = "gemini-pro"          # a conversation over the model's context window
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from colibri_router.environment import user_id, values_of
from colibri_router.errors import ConfigError
from colibri_router.providers.spec import WIRE_NAMES, HostQuirks, ProviderSpec, WireName

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROVIDER_KEYS = frozenset({"wire", "base_url", "api_key_env", "default_model", "models", "headers", "tools"})
ROUTING_KEYS = ("vision", "documents", "long_context")
_TABLES = ("providers", "aliases", "fallback", "routing")


@dataclass(frozen=True, slots=True, eq=False)  # compared and hashed by identity: one per parse
class ConfigFile:
    path: str | None
    providers: tuple[ProviderSpec, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    fallback: tuple[str, ...] = ()
    routing: Mapping[str, str] = field(default_factory=dict)  # [routing]: key (ROUTING_KEYS) → model name


NO_CONFIG = ConfigFile(path=None)


def load_config(builtin_names: frozenset[str]) -> ConfigFile:
    path = config_path()
    try:
        status = path.stat()
    except FileNotFoundError:
        if os.environ.get("COLIBRI_CONFIG"):
            raise ConfigError(f"COLIBRI_CONFIG points at {str(path)!r}, which does not exist") from None
        return NO_CONFIG
    except OSError as exc:
        raise ConfigError(f"config file {str(path)!r} cannot be read: {exc.strerror}") from exc
    if not stat.S_ISREG(status.st_mode):
        raise ConfigError(f"config file {str(path)!r} is not a regular file")
    return _parse(str(path), status.st_mtime_ns, status.st_size, builtin_names)


def config_path() -> Path:
    """The config file's path as the environment says now (it may not exist)."""
    read = values_of(_PATH_VARIABLES)
    return _config_path(read.get("COLIBRI_CONFIG"), read.get("XDG_CONFIG_HOME"), _home_variables(read), user_id())


@functools.lru_cache(maxsize=8)
def _config_path(
    configured: str | None, config_home: str | None, _home_variables: tuple[str | None, ...], _user_id: int | None
) -> Path:
    """The path for these variables, cached on every input it reads (the home variables and the user
    id stand for ``Path.home()``, which reads the password entry when ``HOME`` is unset): every call
    asks for it, twice, and building it afresh cost more than the file's stat."""
    if configured:
        return Path(configured).expanduser()
    base = config_home or str(Path.home() / ".config")
    return Path(base) / "colibri-router" / "config.toml"


# What Path.home() reads: HOME on POSIX, USERPROFILE (else HOMEDRIVE and HOMEPATH) on Windows.
_HOME_VARIABLES = ("HOME", "USERPROFILE", "HOMEDRIVE", "HOMEPATH")


_PATH_VARIABLES = frozenset({"COLIBRI_CONFIG", "XDG_CONFIG_HOME", *_HOME_VARIABLES})


def _home_variables(read: dict[str, str]) -> tuple[str | None, ...]:
    return tuple(read.get(name) for name in _HOME_VARIABLES)


@functools.lru_cache(maxsize=4)
def _parse(path: str, _mtime_ns: int, _size: int, builtin_names: frozenset[str]) -> ConfigFile:
    import tomllib  # only when a config file exists: start-up does without

    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path!r} cannot be read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path!r} is not valid TOML: {exc}") from exc
    unknown = sorted(set(document) - set(_TABLES))
    if unknown:
        raise ConfigError(f"config file {path!r}: unknown table(s) {', '.join(unknown)} (known: {', '.join(_TABLES)})")
    tables = document.get("providers", {})
    if not isinstance(tables, dict):
        raise ConfigError(f"config file {path!r}: `providers` must be a table of [providers.<name>] tables")
    providers = tuple(_provider(path, name, entry, builtin_names) for name, entry in tables.items())
    return ConfigFile(
        path=path,
        providers=providers,
        aliases=_aliases(path, document),
        fallback=_fallback(path, document),
        routing=_routing(path, document),
    )


def _aliases(path: str, document: Mapping[str, Any]) -> dict[str, str]:
    aliases = document.get("aliases", {})
    if not isinstance(aliases, dict) or not all(isinstance(v, str) and v for v in aliases.values()):
        raise ConfigError(f'config file {path!r}, [aliases]: each alias must be `name = "<provider>:<model>"`')
    return dict(aliases)


def _fallback(path: str, document: Mapping[str, Any]) -> tuple[str, ...]:
    table = document.get("fallback", {})
    models = table.get("models", []) if isinstance(table, dict) else None
    if not isinstance(table, dict) or set(table) - {"models"} or not isinstance(models, list):
        raise ConfigError(f'config file {path!r}, [fallback]: expected `models = ["<model>", ...]` and nothing else')
    if not all(isinstance(m, str) and m for m in models):
        raise ConfigError(f"config file {path!r}, [fallback]: models must be non-empty strings")
    return tuple(models)


def _routing(path: str, document: Mapping[str, Any]) -> dict[str, str]:
    table = document.get("routing", {})
    if not isinstance(table, dict) or set(table) - set(ROUTING_KEYS):
        raise ConfigError(f"config file {path!r}, [routing]: known keys are {', '.join(ROUTING_KEYS)}")
    if not all(isinstance(model, str) and model for model in table.values()):
        raise ConfigError(f'config file {path!r}, [routing]: each entry must be `<key> = "<model>"`')
    return dict(table)


def _provider(path: str, name: str, entry: object, builtin_names: frozenset[str]) -> ProviderSpec:
    def problem(text: str) -> ConfigError:
        return ConfigError(f"config file {path!r}, [providers.{name}]: {text}")

    if not isinstance(entry, dict):
        raise problem("must be a table")
    if name in builtin_names:
        raise problem(f"{name!r} is a built-in provider; a custom provider needs a name of its own")
    if not _NAME.fullmatch(name):
        raise problem("the name must be lower-case letters, digits, '.', '_' or '-'")
    if unknown := sorted(set(entry) - _PROVIDER_KEYS):
        raise problem(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_PROVIDER_KEYS))})")
    wire = entry.get("wire")
    if wire not in WIRE_NAMES:
        raise problem(f"wire must be one of {', '.join(WIRE_NAMES)}")
    base_url = _string(entry, "base_url", problem, required=True)
    if not base_url or not re.match(r"https?://", base_url):
        raise problem("base_url must be an http:// or https:// URL")
    key_envs = _key_envs(entry.get("api_key_env"), problem)
    models = entry.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
        raise problem("models must be a list of model names")
    headers = entry.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise problem("headers must be a table of strings")
    tools = entry.get("tools", True)
    if not isinstance(tools, bool):
        raise problem("tools must be true or false")
    return ProviderSpec(
        name=name,
        wire=cast(WireName, wire),
        base_url=base_url.rstrip("/"),
        base_url_env="",
        key_envs=key_envs,
        key_required=bool(key_envs),
        pool_key_envs=len(key_envs) > 1,
        default_model=_string(entry, "default_model", problem),
        models=tuple(models),
        headers=cast(Mapping[str, str], headers),
        quirks=HostQuirks(),
        tools=tools,
        builtin=False,
    )


def _key_envs(value: object, problem: Any) -> tuple[str, ...]:
    """``api_key_env``: one variable's name, or a list of names whose keys form one pool."""
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and _ENV_NAME.fullmatch(n) for n in names)
    ):
        raise problem(
            "api_key_env must be the NAME of an environment variable, or a list of names "
            "(the key never lives in the file)"
        )
    return tuple(dict.fromkeys(names))


def _string(entry: Mapping[str, Any], key: str, problem: Any, *, required: bool = False) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise problem(f"{key} must be a non-empty string")
    return value
