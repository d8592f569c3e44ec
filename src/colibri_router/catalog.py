"""What models exist: the names the router knows per provider, "did you mean" suggestions, and the
live model lists the providers' own endpoints give (``router_models``).

Known names come from the registry (default models, the config file's ``models``), the aliases'
targets, and the bundled price data's names for the provider. Nothing here reads a key's value into
a result: ``configured`` only says whether one is set.
"""

from __future__ import annotations

import difflib

from colibri_router.pricing import known_models as priced_models
from colibri_router.providers import Choice, ProviderSpec, Registry

MAX_SUGGESTIONS = 3


def known_models(spec: ProviderSpec, registry: Registry) -> list[str]:
    names: dict[str, None] = {}
    if spec.default_model:
        names[spec.default_model] = None
    names.update(dict.fromkeys(spec.models))
    for target in registry.aliases.values():
        provider, colon, model = target.partition(":")
        if colon and provider == spec.name:
            names[model] = None
    if spec.price_provider:
        names.update(dict.fromkeys(priced_models(spec.price_provider)))
    return list(names)


def did_you_mean(choice: Choice, registry: Registry) -> str:
    """`` (did you mean: a, b, c?)`` from the provider's known names, or "" when none is close."""
    close = difflib.get_close_matches(
        choice.model, known_models(choice.provider, registry), n=MAX_SUGGESTIONS, cutoff=0.5
    )
    return f" (did you mean: {', '.join(close)}?)" if close else ""
