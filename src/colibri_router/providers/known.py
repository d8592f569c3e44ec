"""The model names the router knows per provider, and "did you mean" suggestions from them.

Known names come from the registry (default models, the config file's ``models``), the aliases'
targets, an agent's own list, and the bundled price data's names for the provider. Below the router
and the services: the router suggests close names for a model its provider does not know, the
``router_models`` catalog lists them, the metrics take only known names as labels. Not imported by
the package (the price data loads on first use, not at start-up).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from colibri_router.pricing import known_models as priced_models
from colibri_router.providers.placing import MAX_SUGGESTIONS
from colibri_router.providers.registry import Choice, Registry
from colibri_router.providers.spec import ProviderSpec
from colibri_router.settings import load_settings

__all__ = ["did_you_mean", "known_models"]


def known_models(spec: ProviderSpec, registry: Registry, aliases: Mapping[str, str] | None = None) -> list[str]:
    """The names known for ``spec``; ``aliases``: the registry's alias targets, already resolved."""
    names: dict[str, None] = {}
    if spec.default_model:
        names[spec.default_model] = None
    names.update(dict.fromkeys(spec.models))
    targets = aliases if aliases is not None else registry.alias_targets(load_settings())
    for target in targets.values():
        provider, colon, model = target.partition(":")
        if colon and model and provider == spec.name:
            names[model] = None
    if spec.agent is not None:
        names.update(dict.fromkeys(spec.agent.models))
    if spec.price_provider:
        names.update(dict.fromkeys(priced_models(spec.price_provider)))
    return list(names)


def did_you_mean(choice: Choice, registry: Registry) -> str:
    """`` (did you mean: a, b, c?)`` from the provider's known names, or "" when none is close."""
    close = difflib.get_close_matches(
        choice.model, known_models(choice.provider, registry), n=MAX_SUGGESTIONS, cutoff=0.5
    )
    return f" (did you mean: {', '.join(close)}?)" if close else ""
