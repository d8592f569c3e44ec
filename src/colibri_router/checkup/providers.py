"""Each provider: whether its key is set (which variable, never the value), its keys by fingerprint
with their state (usable, or set aside: docs/keys.md), its base URL and where that comes from, and,
when asked, one cheap request (its model list) with the latency and the error kind when it fails,
asked with each key of a pool. Plus where a call naming no model goes, since that one must work."""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx

from colibri_router.agents.command import runs
from colibri_router.checkup import Section
from colibri_router.engine.clients import shared_client
from colibri_router.engine.keys import REASON_OF_KIND, KeyPool, KeyStatus, fingerprint, pool_for, share_through
from colibri_router.engine.shared_keys import SharedSetAsides
from colibri_router.engine.transport import get_json
from colibri_router.errors import ColibriError, ConfigError
from colibri_router.providers import (
    ProviderSpec,
    configured,
    configured_base_url,
    configured_keys,
    connect,
    load_registry,
    usable_providers,
)
from colibri_router.settings import load_settings, variable
from colibri_router.wires import codec_for

LIVE_TIMEOUT_S = 10.0


def _set(name: str) -> bool:
    try:
        return bool(variable(name))
    except ConfigError:  # the env file is unreadable: the env file's section says so
        return False


def _subscription(spec: ProviderSpec) -> Section:
    """A command-line agent (found, and answering ``--version``) or the host's model (offered only
    by a host that declares sampling, which a command line cannot know): no key, no URL."""
    if spec.agent is None:
        return Section(spec.name, "off", "the host's own model: used only when the MCP host offers sampling")

    agent = spec.agent
    fields: dict[str, Any] = {"wire": spec.wire, "command": agent.command, "command_variable": agent.bin_env}
    if runs(spec):
        return Section(spec.name, "ok", f"`{agent.command}` answers; it uses its own login", fields)
    summary = f"`{agent.command}` not found (npm install -g {agent.package}, or set {agent.bin_env})"
    return Section(spec.name, "off", summary, fields)


def _provider(spec: ProviderSpec) -> Section:
    if spec.subscription:
        return _subscription(spec)
    key_variable = next((name for name in spec.key_envs if _set(name)), None)
    from_variable = bool(spec.base_url_env) and _set(spec.base_url_env)
    try:
        base_url = configured_base_url(spec)
    except ConfigError:
        base_url = spec.base_url
    try:
        usable = configured(spec)
    except ConfigError:  # as above
        usable = False
    fields: dict[str, Any] = {
        "wire": spec.wire,
        "key_variables": list(spec.key_envs),
        "key_set": key_variable is not None,
        "base_url": base_url,
        "base_url_variable": spec.base_url_env or None,
        "base_url_from_variable": from_variable,
    }
    keys = _keys(spec)
    if keys:
        fields["keys"] = keys
    if key_variable:
        usable_keys = sum(key["state"] == "usable" for key in keys)
        summary = f"{key_variable} set" + (f" ({len(keys)} keys, {usable_keys} usable)" if len(keys) > 1 else "")
    elif spec.key_envs and spec.key_required:
        summary = f"no key ({' or '.join(spec.key_envs)})"
    elif spec.local and not usable:
        summary = f"not in use ({spec.base_url_env} unset)"
    else:
        summary = "no key needed"
    section = Section(spec.name, "ok" if usable else "off", f"{summary}; {base_url}", fields)
    url = httpx.URL(base_url) if "://" in base_url else None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        section.fail(
            f"{spec.name}: base URL {base_url!r} is not an http(s) URL"
            + (f" (from {spec.base_url_env})" if from_variable else "")
        )
    if not spec.builtin and spec.key_envs and spec.key_required and not key_variable:
        section.fail(f"{spec.name} (from the config file) has no key: set {' or '.join(spec.key_envs)}")
    return section


async def _share_with_replicas(specs: list[ProviderSpec]) -> None:
    """On a team server's database (PostgreSQL), the keys its replicas set aside are the keys' state:
    read once, before the keys are listed, on a connection that changes nothing (no schema made)."""
    try:
        url = load_settings().database_url
        pooled = any(len(configured_keys(spec)) > 1 for spec in specs if spec.key_envs)
    except ConfigError:  # the settings' own section reports it
        return
    if not url or not url.startswith(("postgresql://", "postgres://")) or not pooled:
        return
    try:  # the postgres extra (asyncpg): imported only when the store is PostgreSQL
        from colibri_router.store.postgres.keys import read_only
    except ImportError:  # without the postgres extra the store's section says so
        return
    rows = await read_only(url, time.time(), timeout_s=LIVE_TIMEOUT_S / 2)
    sharing = SharedSetAsides(_Rows(rows))
    share_through(sharing)
    await sharing.refresh(force=True)


class _Rows:
    """What the replicas had set aside when doctor read it: a store whose writes go nowhere."""

    def __init__(self, rows: list[tuple[str, str, str, float, int]]) -> None:
        self._rows = rows

    async def key_set_asides(self, now: float) -> list[tuple[str, str, str, float, int]]:
        return self._rows

    async def set_key_aside(self, row: tuple[str, str, str, float, int], now: float) -> None:
        return None

    async def clear_key(self, provider: str, fingerprint: str) -> None:
        return None


def key_statuses(spec: ProviderSpec) -> list[KeyStatus]:
    """Each key by fingerprint and its state in this process (shared with the replicas' on the team
    server); a single key is never set aside. doctor lists these, and so does ``/ui/keys``."""
    try:
        keys = configured_keys(spec)
    except ConfigError:
        return []
    if len(keys) == 1:
        return [KeyStatus(fingerprint(spec.name, keys[0]), "usable", None)]
    return pool_for(spec.name, keys).statuses() if keys else []


def _keys(spec: ProviderSpec) -> list[dict[str, Any]]:
    return [
        {"fingerprint": status.fingerprint, "state": status.state, "seconds_left": status.seconds_left}
        for status in key_statuses(spec)
    ]


async def providers(*, live: bool) -> list[Section]:
    specs = list(usable_providers().values())
    await _share_with_replicas(specs)
    sections = [_provider(spec) for spec in specs]
    if live:
        async with anyio.create_task_group() as group:
            for spec, section in zip(specs, sections, strict=True):
                if section.status == "ok" and not spec.subscription:
                    group.start_soon(_ask_live, spec, section)
    return sections


async def _ask_live(spec: ProviderSpec, section: Section) -> None:
    """One GET of the provider's model list: its latency, and its error's code and kind."""

    connection = None
    started = time.monotonic()
    live: dict[str, Any] = {"ok": False, "latency_ms": None, "models": None, "error": None}
    section.fields["live"] = live
    try:
        connection = connect(spec)
        codec = codec_for(spec, spec.default_model or "")
        http = await shared_client()
        with anyio.fail_after(LIVE_TIMEOUT_S):
            if connection.pool is not None:
                body = await _ask_each_key(spec, connection.pool, connection.base_url, section)
            else:
                url, headers = codec.model_list_endpoint(connection.base_url, connection.api_key)
                body = await get_json(http, url, headers, codec=codec)
        live.update(ok=True, models=len(codec.decode_model_list(body)))
    except TimeoutError:
        live["error"] = {"code": f"{spec.error_prefix}_TIMEOUT", "kind": "TIMEOUT", "message": "no answer in time"}
    except ColibriError as error:
        for key in connection.pool.keys if connection is not None and connection.pool else ():
            error.scrub(key)
        if connection is not None and connection.api_key:
            error.scrub(connection.api_key)
        live["error"] = {"code": error.code, "kind": error.kind, "message": error.message}
    live["latency_ms"] = round((time.monotonic() - started) * 1000)
    if live["ok"]:
        plural = "" if live["models"] == 1 else "s"
        section.summary += f"; live: {live['models']} model{plural} in {live['latency_ms']} ms"
        return
    failure = live["error"]
    section.summary += f"; live: {failure['kind']} after {live['latency_ms']} ms"
    section.fail(f"{spec.name}: the model list failed: {failure['code']} ({failure['kind']}): {failure['message']}")


async def _ask_each_key(spec: ProviderSpec, pool: KeyPool, base_url: str, section: Section) -> dict[str, Any]:
    """The model list asked with every key of the pool: each key's entry gets ``live`` (ok, or the
    failure's kind), and a key the provider refuses is set aside as a call would set it aside. Returns
    the first list a key got; raises the last failure when no key got one."""
    codec = codec_for(spec, spec.default_model or "")
    http = await shared_client()
    entries = {entry["fingerprint"]: entry for entry in section.fields.get("keys", [])}
    body: dict[str, Any] | None = None
    failure: ColibriError | None = None
    for index, key in enumerate(pool.keys):
        url, headers = codec.model_list_endpoint(base_url, key)
        entry = entries.setdefault(pool.fingerprints[index], {"fingerprint": pool.fingerprints[index]})
        try:
            answer = await get_json(http, url, headers, codec=codec)
        except ColibriError as error:
            entry["live"], failure = error.kind, error
            if error.kind in REASON_OF_KIND:
                pool.set_aside(index, REASON_OF_KIND[error.kind], error.retry_after)
        else:
            entry["live"] = "ok"
            body = answer if body is None else body
    states = {status.fingerprint: status for status in pool.statuses()}
    for fp, entry in entries.items():
        entry.update(state=states[fp].state, seconds_left=states[fp].seconds_left)
    refused = [f"{fp} ({entry['live']})" for fp, entry in entries.items() if entry.get("live") != "ok"]
    if refused:
        section.summary += f"; keys refused: {', '.join(refused)}"
    if body is None:
        assert failure is not None
        raise failure
    return body


def _in_use(section: Section) -> bool:
    """Whether a call could use the provider: it was ``ok`` before ``--live``, which asks only those
    and may then mark one a problem (unreachable is not keyless)."""
    return section.status == "ok" or "live" in section.fields


def default_target(provider_sections: list[Section]) -> Section:
    """Where a call naming no model goes (``COLIBRI_DEFAULT_MODEL``, else ``COLIBRI_DEFAULT_PROVIDER``,
    else kimi): the provider every first try reaches, so it must have a key."""

    section = Section("default", "ok", "")
    if not any(_in_use(provider) for provider in provider_sections):
        section.fail("no provider has a key: set one (e.g. COLIBRI_KIMI_API_KEY or ANTHROPIC_API_KEY)")
    try:
        choice = load_registry().choose(None, None, load_settings())
    except ColibriError as error:
        section.summary = "unknown"
        section.fail(error.message)
        return section
    section.fields.update(provider=choice.provider.name, model=choice.model)
    section.summary = f"a call naming no model goes to {choice.provider.name}:{choice.model}"
    if not configured(choice.provider):
        section.fail(
            f"a call naming no model goes to {choice.provider.name}, which has no key: set "
            f"{' or '.join(choice.provider.key_envs) or choice.provider.base_url_env}, or choose another with "
            "COLIBRI_DEFAULT_PROVIDER or COLIBRI_DEFAULT_MODEL"
        )
    return section
