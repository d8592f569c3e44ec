"""Label values with a bounded number of values: a metric gets one time series per combination of
its labels, so a label must never take whatever a caller sends.

- provider: a registry name (built-in, or the config file's), else ``other``;
- model: a name the router knows for that provider (its default and configured models, alias
  targets, the price data's names, and what the price data's rules match), else ``other``;
- kind: an error kind of :data:`colibri_router.errors.Kind`, ``ok`` or ``CANCELLED``.

The caller is a token's name (or the local user): the tokens file bounds it.
"""

from __future__ import annotations

import typing

from colibri_router.errors import Kind
from colibri_router.providers import Registry, load_registry

OTHER = "other"
_KINDS = frozenset({*typing.get_args(Kind), "ok", "CANCELLED"})


def provider_label(provider: str | None) -> str:
    return labels(load_registry(), provider, None)[0]


def model_label(provider: str | None, model: str | None) -> str:
    return labels(load_registry(), provider, model)[1]


def labels(registry: Registry, provider: str | None, model: str | None) -> tuple[str, str]:
    """The provider and model labels, against ``registry`` (loaded once for all of a call's labels:
    loading it checks the config file)."""
    if provider is None or provider not in registry.providers:
        return OTHER, OTHER
    return provider, model if model and _known(registry, provider, model) else OTHER


def kind_label(kind: str | None) -> str:
    return kind if kind is not None and kind in _KINDS else OTHER


_MOST_REMEMBERED = 4096


class _KnownNames:
    """Which (provider, model) pairs are known, remembered for one registry (the same object while the
    config file is unchanged); at most a few thousand answers, so names callers invent stay bounded."""

    def __init__(self) -> None:
        self._registry: Registry | None = None
        self._names: dict[str, frozenset[str]] = {}
        self._answers: dict[tuple[str, str], bool] = {}

    def __call__(self, registry: Registry, provider: str, model: str) -> bool:
        if registry is not self._registry:
            self._registry, self._names, self._answers = registry, {}, {}
        key = (provider, model)
        known = self._answers.get(key)
        if known is None:
            known = model in self._provider_names(registry, provider) or _priced(
                registry.providers[provider].price_provider, model
            )
            if len(self._answers) >= _MOST_REMEMBERED:
                self._answers.clear()
            self._answers[key] = known
        return known

    def _provider_names(self, registry: Registry, provider: str) -> frozenset[str]:
        names = self._names.get(provider)
        if names is None:
            # The price data loads on the first label that needs it, not at start-up.
            from colibri_router.providers.known import known_models

            names = self._names[provider] = frozenset(known_models(registry.providers[provider], registry))
        return names


_known = _KnownNames()


def _priced(price_provider: str | None, model: str) -> bool:
    """Whether the price data's rules match ``model`` at ``price_provider`` (a dated name, say)."""
    if not price_provider:
        return False
    from genai_prices import data_snapshot

    found = data_snapshot.find_provider_by_id(data_snapshot.get_snapshot().providers, price_provider)
    return found is not None and found.find_model(model) is not None
