"""Settings from the environment, loaded per call (never at import), so a host that changes the
environment, or a test that sets it, is obeyed on the next call.

Two kinds of settings: the router's own knobs (:class:`Settings`, ``COLIBRI_*``) and each provider's
variables (its key and base URL, named by its registry entry and read with :func:`variable`).

Empty variables count as unset (``COLIBRI_KIMI_BASE_URL=`` falls back to the default). A ``.env``
file is read only when ``COLIBRI_ENV_FILE`` names one: MCP hosts pass environment explicitly, and a
stray ``.env`` in whatever directory the host starts us in must not change behaviour silently. The
process environment wins over the file.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from colibri_router.environment import values_of
from colibri_router.errors import ConfigError

DEFAULT_TIMEOUT_S = 300.0
_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"0", "false", "no", "off"})


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_ignore_empty=True, extra="ignore", populate_by_name=True, case_sensitive=True, frozen=True
    )

    kimi_tool_ids: Literal["renumber", "repair"] = Field("renumber", validation_alias="COLIBRI_KIMI_TOOL_IDS")
    # Any registry name; checked against the registry when a call uses it (custom providers count).
    default_provider: str = Field("kimi", min_length=1, validation_alias="COLIBRI_DEFAULT_PROVIDER")
    default_model: str | None = Field(None, min_length=1, validation_alias="COLIBRI_DEFAULT_MODEL")
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, validation_alias="COLIBRI_TIMEOUT_S")
    prompt_cache: Literal["auto", "off"] = Field("auto", validation_alias="COLIBRI_PROMPT_CACHE")
    store: Literal["on", "off"] = Field("on", validation_alias="COLIBRI_STORE")
    state_dir: str | None = Field(None, min_length=1, validation_alias="COLIBRI_STATE_DIR")
    thread_ttl_days: float = Field(30.0, gt=0, validation_alias="COLIBRI_THREAD_TTL_DAYS")
    budget_daily_usd: float | None = Field(None, ge=0, validation_alias="COLIBRI_BUDGET_DAILY_USD")
    budget_monthly_usd: float | None = Field(None, ge=0, validation_alias="COLIBRI_BUDGET_MONTHLY_USD")
    budget_daily_usd_per_user: float | None = Field(None, ge=0, validation_alias="COLIBRI_BUDGET_DAILY_USD_PER_USER")
    # A call whose worst case is above it asks the user first (MCP elicitation); a cap where none can be asked.
    confirm_over_usd: float | None = Field(None, ge=0, validation_alias="COLIBRI_CONFIRM_OVER_USD")
    # sqlite:///relative.db, sqlite:////absolute/path.db or postgresql://...; unset: the SQLite file
    # in the state directory.
    database_url: str | None = Field(None, min_length=1, validation_alias="COLIBRI_DATABASE_URL")
    # serve --http: who may call, and what the DNS-rebinding protection accepts (comma-separated).
    http_tokens_file: str | None = Field(None, min_length=1, validation_alias="COLIBRI_HTTP_TOKENS_FILE")
    http_admins: str | None = Field(None, validation_alias="COLIBRI_HTTP_ADMINS")
    http_allowed_hosts: str | None = Field(None, validation_alias="COLIBRI_HTTP_ALLOWED_HOSTS")
    http_allowed_origins: str | None = Field(None, validation_alias="COLIBRI_HTTP_ALLOWED_ORIGINS")
    # serve --http: the key of /ui's session cookies, shared by replicas (unset: random per server).
    http_session_secret: str | None = Field(None, min_length=32, validation_alias="COLIBRI_HTTP_SESSION_SECRET")
    # serve --http: the per-member policy file (TOML: gateway.policy), re-read when it changes.
    http_policy: str | None = Field(None, min_length=1, validation_alias="COLIBRI_HTTP_POLICY")
    # serve --http: /metrics without a token ("1"), and prompt/answer text in trace spans ("1").
    metrics_public: Literal["0", "1"] = Field("0", validation_alias="COLIBRI_METRICS_PUBLIC")
    otel_content: Literal["0", "1"] = Field("0", validation_alias="COLIBRI_OTEL_CONTENT")
    run_concurrency: int = Field(4, ge=1, validation_alias="COLIBRI_RUN_CONCURRENCY")
    # Jobs (docs/jobs.md): a long call still running after handoff_s seconds answers with a job handle and
    # keeps running; a finished job's result is kept job_ttl_s seconds.
    handoff_s: float = Field(40.0, ge=0, validation_alias="COLIBRI_HANDOFF_S")
    job_ttl_s: float = Field(86_400.0, gt=0, validation_alias="COLIBRI_JOB_TTL_S")
    # router_call's `files` and command-line agents: where relative paths start and where agents run
    # (unset: the working directory); the largest file read, the context limit (unset: the model's
    # window minus max_tokens), secret-looking paths the user allows (comma-separated), what one
    # call's globs and directories may walk (entries seen, seconds), and the one directory `files`
    # may read over HTTP.
    workspace: str | None = Field(None, min_length=1, validation_alias="COLIBRI_WORKSPACE")
    file_max_bytes: int = Field(1_000_000, ge=1, validation_alias="COLIBRI_FILE_MAX_BYTES")
    context_max_tokens: int | None = Field(None, ge=1, validation_alias="COLIBRI_CONTEXT_MAX_TOKENS")
    files_allow: str | None = Field(None, validation_alias="COLIBRI_FILES_ALLOW")
    files_max_entries: int = Field(50_000, ge=1, validation_alias="COLIBRI_FILES_MAX_ENTRIES")
    files_max_seconds: float = Field(3.0, gt=0, validation_alias="COLIBRI_FILES_MAX_SECONDS")
    http_files_root: str | None = Field(None, min_length=1, validation_alias="COLIBRI_HTTP_FILES_ROOT")
    # serve --http: command-line agents would run on the server's login for every caller.
    http_agent_cli: bool = Field(False, validation_alias="COLIBRI_HTTP_AGENT_CLI")
    # A turn the call's model cannot read goes to this model instead (router/reroute.py); each wins
    # over the config file's [routing] vision, documents and long_context.
    vision_model: str | None = Field(None, min_length=1, validation_alias="COLIBRI_VISION_MODEL")
    documents_model: str | None = Field(None, min_length=1, validation_alias="COLIBRI_DOCUMENTS_MODEL")
    long_context_model: str | None = Field(None, min_length=1, validation_alias="COLIBRI_LONG_CONTEXT_MODEL")
    log_level: Literal["debug", "info", "warning", "error", "critical"] = Field(
        "info", validation_alias="COLIBRI_LOG_LEVEL"
    )

    @field_validator("kimi_tool_ids", "default_provider", "prompt_cache", "store", "log_level", mode="before")
    @classmethod
    def _case_insensitive(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        value = value.strip().lower()
        return "warning" if value == "warn" else value

    @field_validator("metrics_public", "otel_content", mode="before")
    @classmethod
    def _switch(cls, value: object) -> object:
        """``1``/``0``, and the other ways people write a switch (true, yes, on; false, no, off)."""
        if not isinstance(value, str):
            return value
        value = value.strip().lower()
        return "1" if value in _ON else "0" if value in _OFF else value


def comma_list(value: str | None) -> list[str]:
    """The items of a comma-separated setting, stripped, empty ones dropped."""
    return [item.strip() for item in (value or "").split(",") if item.strip()]


_ENV_FILE_VARIABLE = "COLIBRI_ENV_FILE"
# What load_settings reads: every setting's variable, and the env file's.
_VARIABLES = frozenset({*(str(field.validation_alias) for field in Settings.model_fields.values()), _ENV_FILE_VARIABLE})


def load_settings() -> Settings:
    """Read the environment now. A malformed value is a :class:`ConfigError` naming the variable.

    Building the settings costs more than the rest of a call's own work, so the result is reused
    while the variables it reads (and the env file, if any) are unchanged: still read per call.
    """
    values = values_of(_VARIABLES)
    return _build_settings(frozenset(values.items()), _env_file_stamp(values.get(_ENV_FILE_VARIABLE)))


@functools.lru_cache(maxsize=16)
def _build_settings(_values: frozenset[tuple[str, str]], env_file: tuple[str, int, int] | None) -> Settings:
    try:
        return Settings(_env_file=env_file[0] if env_file else None)  # type: ignore[call-arg]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors(include_input=False)
        )
        raise ConfigError(f"invalid setting: {problems}") from exc


def variable(name: str) -> str | None:
    """A variable named by a registry entry (a key, a base URL), read now: the process environment,
    else the env file. Empty counts as unset."""
    value = os.environ.get(name)
    if value:
        return value
    stamp = _env_file_stamp(os.environ.get(_ENV_FILE_VARIABLE))
    return _env_file_values(stamp).get(name) or None if stamp else None


@functools.lru_cache(maxsize=4)
def _env_file_values(stamp: tuple[str, int, int]) -> dict[str, str]:
    from dotenv import dotenv_values  # only when an env file is in use: start-up does without

    return {key: value for key, value in dotenv_values(stamp[0]).items() if value}


def _env_file_stamp(configured: str | None) -> tuple[str, int, int] | None:
    """The env file's path, modification time and size (one stat), so an edited file is read anew;
    ``configured`` is COLIBRI_ENV_FILE's value."""
    if not configured:
        return None
    path = Path(configured).expanduser()
    try:
        status = path.stat()
    except OSError:
        status = None
    if status is None or not stat.S_ISREG(status.st_mode):
        # Silently ignoring it would leave the user wondering why their keys are "missing".
        raise ConfigError(f"COLIBRI_ENV_FILE points at {str(path)!r}, which is not a readable file")
    return str(path), status.st_mtime_ns, status.st_size
