"""The registry: built-in providers plus the config file's, and the rules that pick one for a call.

Loaded per call (the config file is cached on its stat). Choosing, without an explicit ``provider``:
1. ``<provider>:<model>`` with a registry name before the first colon;
2. a configured provider whose ``models`` holds the name exactly;
3. the built-in name patterns (``claude-*`` → claude, ``gpt-*`` → openai, a Kimi name → kimi...);
4. an HTTP provider that lists the name (its default model, the price data's names: ``placing.py``),
   the default provider first;
5. else the name is refused (``UnknownModelError``, with the close names), unless it comes from the
   user's configuration (``COLIBRI_DEFAULT_MODEL``, an alias's target, ``[fallback]``): that goes to
   ``COLIBRI_DEFAULT_PROVIDER``, else kimi, as it always did.
A call naming neither provider nor model uses ``COLIBRI_DEFAULT_MODEL`` when set, placed by the same rules,
else the default provider's default model. With an explicit provider any name goes to it.
An alias (built-in, or the config file's ``[aliases]``) is resolved first; the result names the model.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from colibri_router.engine.keys import KeyPool, pool_for, split_keys
from colibri_router.errors import ColibriError, ConfigError, InvalidRequestError, error_family
from colibri_router.providers.aliases import BUILTIN_ALIASES, resolve_alias
from colibri_router.providers.builtin import BUILTIN_PROVIDERS
from colibri_router.providers.config import ConfigFile, load_config
from colibri_router.providers.placing import listed_by, unknown_model
from colibri_router.providers.spec import ProviderSpec
from colibri_router.settings import Settings, variable

BUILTIN: Mapping[str, ProviderSpec] = MappingProxyType({spec.name: spec for spec in BUILTIN_PROVIDERS})
_BUILTIN_NAMES = frozenset(BUILTIN)


@dataclass(frozen=True, slots=True)
class Choice:
    provider: ProviderSpec
    model: str


@dataclass(frozen=True, slots=True)
class Connection:
    api_key: str | None
    base_url: str
    pool: KeyPool | None = None  # several keys: each call's requests take them in turn (docs/keys.md)

    def __repr__(self) -> str:  # never print the key, even in a traceback's locals
        return f"Connection(base_url={self.base_url!r}, api_key=[redacted])"


@dataclass(frozen=True, slots=True)
class Registry:
    providers: Mapping[str, ProviderSpec]
    aliases: Mapping[str, str] = field(default_factory=lambda: BUILTIN_ALIASES)
    fallback: tuple[str, ...] = ()  # the config file's default fallback chain
    routing: Mapping[str, str] = field(default_factory=dict)  # the config file's [routing]

    def get(self, name: str) -> ProviderSpec:
        spec = self.providers.get(name)
        if spec is None:
            raise InvalidRequestError(f"unknown provider {name!r}; known: {', '.join(self.providers)}")
        return spec

    def choose(
        self, provider: str | None, model: str | None, settings: Settings, *, configured: bool = False
    ) -> Choice:
        """``configured``: ``model`` comes from the user's configuration (a ``[fallback]`` entry), so a
        name no rule places goes to the default provider instead of being refused."""
        asked = model
        model = resolve_alias(model, self.aliases)
        if provider is not None:
            spec = self.get(provider)
            if model is not None and model != asked and not model.startswith(f"{provider}:"):
                # An alias of another provider's model ("sonnet" for claude) is, for this provider,
                # the name it was given: Claude Code takes "sonnet" itself.
                model = asked
            if model is not None and model.startswith(f"{provider}:"):
                model = model[len(provider) + 1 :]
            return Choice(spec, self._model_or_default(spec, model))
        if model is None:
            configured, asked = True, settings.default_model
            model = resolve_alias(asked, self.aliases)
        if model is None:
            spec = self._default_provider(settings)
            return Choice(spec, self._model_or_default(spec, None))
        placed = self._placed(model, settings)
        if placed is not None:
            return placed
        if configured or asked in self.aliases:
            return Choice(self._default_provider(settings), model)
        raise unknown_model(model, self.providers, self.aliases, settings.default_provider)

    def _placed(self, model: str, settings: Settings) -> Choice | None:
        """The choice a rule makes for a name (an alias already resolved), or None when none does."""
        name, colon, rest = model.partition(":")
        if colon and name in self.providers:
            if not rest:
                raise InvalidRequestError(f"model {model!r} names provider {name!r} but no model after the colon")
            return Choice(self.providers[name], rest)
        for spec in self.providers.values():
            if not spec.builtin and model in spec.models:
                return Choice(spec, model)
        for spec in self.providers.values():
            if spec.builtin and spec.claims_model(model):
                return Choice(spec, model)
        listing = listed_by(self.providers, model, settings.default_provider)
        return None if listing is None else Choice(listing, model)

    def alias_targets(self, settings: Settings) -> dict[str, str]:
        """Every alias as the ``<provider>:<model>`` a call naming it goes to: a target written as a bare
        model name is placed by the choosing rules above. A target no rule can place (``"kimi:"``, or a
        default provider that is no provider) is shown as written: the call reports why."""
        targets = {}
        for alias, target in self.aliases.items():
            try:
                choice = self.choose(None, alias, settings)
            except ColibriError:
                targets[alias] = target
            else:
                targets[alias] = f"{choice.provider.name}:{choice.model}"
        return targets

    def _default_provider(self, settings: Settings) -> ProviderSpec:
        spec = self.providers.get(settings.default_provider)
        if spec is None:
            raise ConfigError(
                f"COLIBRI_DEFAULT_PROVIDER is {settings.default_provider!r}, which is no provider; "
                f"known: {', '.join(self.providers)}"
            )
        return spec

    @staticmethod
    def _model_or_default(spec: ProviderSpec, model: str | None) -> str:
        chosen = model or spec.default_model
        if chosen is None:
            raise InvalidRequestError(f"provider {spec.name!r} has no default model: pass `model`")
        return chosen


def load_registry() -> Registry:
    """Built-ins and the config file's providers, as the environment and the file say now."""
    config = load_config(_BUILTIN_NAMES)
    return _BUILTIN_REGISTRY if config.path is None else _merged(config)


@functools.lru_cache(maxsize=4)
def _merged(config: ConfigFile) -> Registry:
    """The built-ins with a parsed config file, built once per parse (the parse is cached on the
    file's stat, so an unchanged file gives the same object)."""
    return Registry(
        providers=MappingProxyType({**BUILTIN, **{spec.name: spec for spec in config.providers}}),
        aliases=MappingProxyType({**BUILTIN_ALIASES, **config.aliases}),
        fallback=config.fallback,
        routing=MappingProxyType(dict(config.routing)),
    )


_BUILTIN_REGISTRY = Registry(BUILTIN)


def connect(
    spec: ProviderSpec, api_key: str | None = None, base_url: str | None = None, *, key_option: str | None = None
) -> Connection:
    """Key: option, else the entry's variables (docs/python-api.md). URL: option, else its variable, else
    the entry's default. A required key that is missing is ``<PREFIX>_CONFIG_ERROR``, whose message
    names ``key_option`` too when the caller has one (the Python API's ``api_key``)."""
    keys = (api_key,) if api_key else configured_keys(spec)
    key = keys[0] if keys else None
    if key is None and spec.key_required:
        names = " or ".join(spec.key_envs)
        raise error_family(spec.error_prefix).config(
            f"no API key for {spec.name}: set {names} in the environment the MCP host passes to colibri-router"
            + (f" (or pass {key_option})" if key_option else "")
        )
    pool = pool_for(spec.name, keys) if len(keys) > 1 else None
    if pool is not None:
        key = pool.key(pool.preferred())
    return Connection(api_key=key, base_url=(base_url or configured_base_url(spec)).rstrip("/"), pool=pool)


def configured_keys(spec: ProviderSpec) -> tuple[str, ...]:
    """The provider's keys as the environment says now: the comma-separated keys of its first set key
    variable, or of every one of them for a config entry that names several (``pool_key_envs``);
    each key once, in order."""
    values = [value for name in spec.key_envs if (value := variable(name))]
    if not spec.pool_key_envs:
        values = values[:1]
    return tuple(dict.fromkeys(key for value in values for key in split_keys(value)))


def configured_base_url(spec: ProviderSpec) -> str:
    """The entry's base URL as the environment says now: its variable, else its default."""
    return ((variable(spec.base_url_env) if spec.base_url_env else None) or spec.base_url).rstrip("/")


def configured(spec: ProviderSpec) -> bool:
    """Whether the provider can be called as the environment stands: its key is set (local servers,
    which need none: whether their base-URL variable is set). A subscription (a command-line agent,
    the host's model) has no key to look at: whether it answers is for the catalog to ask."""
    if spec.subscription:
        return False
    if spec.key_envs and spec.key_required:
        return bool(configured_keys(spec))
    if spec.local:
        return bool(spec.base_url_env and variable(spec.base_url_env))
    return True


def usable_providers() -> Mapping[str, ProviderSpec]:
    """The registry's providers as the environment and config file stand now; the built-ins alone
    when the config file is broken (every call then reports the problem)."""
    try:
        return load_registry().providers
    except ConfigError:
        return BUILTIN


def provider_names() -> list[str]:
    return list(usable_providers())
