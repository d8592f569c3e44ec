"""What models exist (``router_models``): the names the router knows per provider
(:mod:`colibri_router.providers.known`) and the live model lists the providers' own endpoints give.
Nothing here reads a key's value into a result: ``configured`` only says whether one is set.
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import httpx

from colibri_router.agents.command import runs
from colibri_router.callers import ToolCall
from colibri_router.catalog.schema import ProviderModels, RouterModelsInput, RouterModelsResult
from colibri_router.engine.clients import shared_client
from colibri_router.engine.keys import pool_for
from colibri_router.engine.transport import get_json
from colibri_router.errors import ColibriError
from colibri_router.gateway.enforce import visible_models
from colibri_router.providers import (
    ProviderSpec,
    Registry,
    configured,
    configured_base_url,
    configured_keys,
    connect,
    load_registry,
)
from colibri_router.providers.known import known_models
from colibri_router.providers.wires import WIRE_FORMS
from colibri_router.session import current_session
from colibri_router.settings import load_settings
from colibri_router.structured import support_for
from colibri_router.wires import codec_for

LIVE_TIMEOUT_S = 10.0


async def subscription_available(spec: ProviderSpec) -> bool:
    """A command-line agent: its command answers ``--version`` (asked once per process). The host's
    model: the client of this session declared ``sampling``."""
    if spec.agent is None:
        return current_session().sampler is not None

    return await anyio.to_thread.run_sync(runs, spec)


async def for_tool(args: RouterModelsInput, _call: ToolCall) -> RouterModelsResult:
    """router_models, as the tool table (:mod:`colibri_router.server.table`) calls it."""
    return visible_models(await list_models(args))  # a team member sees only what their policy allows


async def list_models(args: RouterModelsInput, *, client: httpx.AsyncClient | None = None) -> RouterModelsResult:
    """Every provider (or the one asked for) with what is known of its models; with ``live``, each
    configured provider's own list too, asked in parallel within :data:`LIVE_TIMEOUT_S`."""
    registry = load_registry()
    targets = registry.alias_targets(load_settings())
    specs = [registry.get(args.provider)] if args.provider else list(registry.providers.values())
    entries = [_entry(spec, registry, targets) for spec in specs]
    for spec, entry in zip(specs, entries, strict=True):
        if spec.subscription:
            entry.configured = await subscription_available(spec)
    if args.live:
        http = client if client is not None else await shared_client()
        with anyio.move_on_after(LIVE_TIMEOUT_S):
            async with anyio.create_task_group() as group:
                for spec, entry in zip(specs, entries, strict=True):
                    if entry.configured and not spec.subscription:
                        # Stays the answer for a provider still silent when the time is up.
                        entry.live_error = f"{spec.error_prefix}_TIMEOUT: no model list within {LIVE_TIMEOUT_S:g} s"
                        group.start_soon(_ask_live, spec, entry, http)
    for spec, entry in zip(specs, entries, strict=True):
        _with_forms(spec, entry)
    aliases = {
        alias: target
        for alias, target in targets.items()
        if args.provider is None or target.startswith(f"{args.provider}:")
    }
    return RouterModelsResult(providers=entries, aliases=aliases)


def _entry(spec: ProviderSpec, registry: Registry, aliases: Mapping[str, str]) -> ProviderModels:
    keys = configured_keys(spec) if spec.key_envs else ()
    # A pool's keys may be set aside (docs/keys.md); a single key never is.
    usable = len(pool_for(spec.name, keys).set_aside_now()) if len(keys) > 1 else 0
    return ProviderModels(
        name=spec.name,
        wire=spec.wire,
        configured=configured(spec),
        base_url=configured_base_url(spec),
        default_model=spec.default_model,
        models=known_models(spec, registry, aliases),
        live_error=None,
        keys=len(keys),
        keys_usable=len(keys) - usable,
    )


def _with_forms(spec: ProviderSpec, entry: ProviderModels) -> None:
    """The provider's structured-output form, and each listed model's where its family's differs."""
    host = spec.structured or WIRE_FORMS[spec.wire]
    entry.structured_output = host.label
    for model in entry.models:
        form = support_for(spec, model)
        if form.label != host.label:
            entry.structured_output_models[model] = form.label


async def _ask_live(spec: ProviderSpec, entry: ProviderModels, http: httpx.AsyncClient) -> None:
    """Merge the provider's own list into ``entry`` (live names first), or say why it failed."""
    connection = None
    try:
        connection = connect(spec)
        codec = codec_for(spec, spec.default_model or "")
        url, headers = codec.model_list_endpoint(connection.base_url, connection.api_key)
        live = codec.decode_model_list(await get_json(http, url, headers, codec=codec))
    except ColibriError as error:
        for key in connection.pool.keys if connection is not None and connection.pool else ():
            error.scrub(key)
        if connection is not None and connection.api_key:
            error.scrub(connection.api_key)
        entry.live_error = f"{error.code}: {error.message}"
        return
    entry.models = list(dict.fromkeys([*live, *entry.models]))
    entry.live_error = None
