"""Names the catalog places, and the refusal of a name no rule places.

A model name in a call reaches a provider only when a rule places it (the order is the registry's):
an alias, a registry name before its first colon, a custom provider's ``models``, a built-in name
pattern, or a name listed for an HTTP provider here: its default model or a name of the bundled price
data for it. A name none of them places is ``INVALID_REQUEST`` before anything is sent, with the close
names: sent to the default provider, a typo would fail there for want of its key, or be paid for.
The user's own configuration (``COLIBRI_DEFAULT_MODEL``, an ``[aliases]`` target, ``[fallback]``) is
trusted: a name of it that no rule places still goes to the default provider.

A leaf below the registry: it reads the price data (imported the first time a name gets past the
earlier rules, never at start-up) but no registry.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping, Sequence

from colibri_router.errors import InvalidRequestError
from colibri_router.providers.spec import ProviderSpec

MAX_SUGGESTIONS = 3
_CUTOFF = 0.6
_PROVIDER_CUTOFF = 0.75  # a provider's name is short: a looser match suggests unrelated ones


class UnknownModelError(InvalidRequestError):
    """A name no rule places. ``suggestions`` are names that would be placed, closest first."""

    def __init__(self, name: str, clause: str, suggestions: Sequence[str], hint: str) -> None:
        self.name = name
        self.clause = clause  # what is wrong with this one name, without the hint
        self.suggestions = tuple(suggestions)
        self.hint = hint
        super().__init__(f"{clause}; {hint}")
        self.model = name


def listed_by(providers: Mapping[str, ProviderSpec], model: str, default: str) -> ProviderSpec | None:
    """The HTTP provider that lists ``model`` (the default provider first, then the registry's order).
    A subscription is never chosen this way: it runs on the user's own login, so only a name that
    says so reaches it."""
    first = providers.get(default)
    ordered = [first] if first is not None else []
    ordered.extend(spec for spec in providers.values() if spec is not first)
    for spec in ordered:
        if not spec.subscription and _lists(spec, model):
            return spec
    return None


def unknown_model(
    name: str, providers: Mapping[str, ProviderSpec], aliases: Mapping[str, str], default: str
) -> UnknownModelError:
    """The refusal of ``name``, which no rule places, with up to three close names that would be."""
    prefix, colon, rest = name.partition(":")
    hint = f'a model the router does not know yet is sent by naming its provider, e.g. "{default}:<model>"'
    if colon and rest:
        # A misspelt provider ("opnai:gpt-5"), or a model name with a tag ("llama3.2:3b") meant for one.
        typo = [f"{provider}:{rest}" for provider in _close(prefix, providers, cutoff=_PROVIDER_CUTOFF)]
        suggestions = [*typo, *_close(name, _candidates(providers, aliases))][:MAX_SUGGESTIONS]
        clause = f"unknown provider {prefix!r} in model {name!r} (providers: {', '.join(providers)})"
    else:
        # A provider's name given as a model ("claude") means its default model.
        named = [
            f"{provider}:{providers[provider].default_model}"
            for provider in _close(name, providers, cutoff=_PROVIDER_CUTOFF)
            if providers[provider].default_model
        ]
        suggestions = list(dict.fromkeys([*named, *_close(name, _candidates(providers, aliases))]))[:MAX_SUGGESTIONS]
        clause = f"unknown model {name!r}: no alias, provider prefix, name pattern or listed model places it"
    if suggestions:
        clause += f" (did you mean: {', '.join(suggestions)}?)"
    return UnknownModelError(name, clause, suggestions, hint)


def refusal(errors: Sequence[UnknownModelError]) -> UnknownModelError:
    """One error for several unplaced names: each name's clause, the hint once."""
    if len(errors) == 1:
        return errors[0]
    first = errors[0]
    combined = UnknownModelError(first.name, "; ".join(error.clause for error in errors), first.suggestions, first.hint)
    combined.model = None  # the error concerns several names: each is in the message
    return combined


def _candidates(providers: Mapping[str, ProviderSpec], aliases: Mapping[str, str]) -> list[str]:
    """Every name that would be placed as written: aliases, listed names, and each provider with a
    default model as ``<provider>:<default>`` (a bare provider name is not a model)."""
    names: dict[str, None] = dict.fromkeys(aliases)
    for spec in providers.values():
        if not spec.subscription:
            names.update(dict.fromkeys(listed_names(spec)))
        names.update(dict.fromkeys(spec.models))
    for spec in providers.values():
        if spec.default_model:
            names[f"{spec.name}:{spec.default_model}"] = None
    return list(names)


def _close(name: str, candidates: Iterable[str], *, cutoff: float = _CUTOFF) -> list[str]:
    """The closest candidates, compared without case (``Kimi-K2`` is close to ``kimi-k2``)."""
    by_folded: dict[str, str] = {}
    for candidate in candidates:
        by_folded.setdefault(candidate.casefold(), candidate)
    close = difflib.get_close_matches(name.casefold(), by_folded, n=MAX_SUGGESTIONS, cutoff=cutoff)
    return [by_folded[folded] for folded in close]


def _lists(spec: ProviderSpec, model: str) -> bool:
    if model == spec.default_model or model in spec.models:
        return True
    return bool(spec.price_provider) and not spec.local and model in _priced(spec.price_provider or "")


def listed_names(spec: ProviderSpec) -> list[str]:
    """The names ``spec`` lists (a subscription's are never placed by this list: see ``listed_by``)."""
    listed = [*([spec.default_model] if spec.default_model else []), *spec.models]
    if spec.price_provider and not spec.local:
        listed.extend(sorted(_priced(spec.price_provider)))
    return listed


@functools.lru_cache(maxsize=32)
def _priced(price_provider: str) -> frozenset[str]:
    """The price data's callable names for a provider, read once per process from the data loaded
    then (names are added far more often than removed)."""
    # The price data (genai-prices) loads on the first call that needs it, not at start-up.
    from colibri_router.pricing import known_models

    return frozenset(known_models(price_provider))
