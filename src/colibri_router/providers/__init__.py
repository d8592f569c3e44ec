"""Providers as data: the registry of entries (wire and host), their host quirks, and model profiles.

The model profiles are imported on first use: the server needs the registry at start-up, the
profiles only once a call is made.
"""

from typing import TYPE_CHECKING, Any

from colibri_router.providers.registry import (
    BUILTIN,
    Choice,
    Connection,
    Registry,
    configured,
    configured_base_url,
    configured_keys,
    connect,
    load_registry,
    provider_names,
    usable_providers,
)
from colibri_router.providers.spec import HostQuirks, ProviderSpec, WireName

__all__ = [
    "BUILTIN",
    "Choice",
    "Connection",
    "HostQuirks",
    "ModelProfile",
    "ProviderSpec",
    "Registry",
    "WireName",
    "configured",
    "configured_base_url",
    "configured_keys",
    "connect",
    "is_kimi_model",
    "load_registry",
    "profile_for",
    "provider_names",
    "usable_providers",
]

if TYPE_CHECKING:
    from colibri_router.providers.profiles import ModelProfile, is_kimi_model, profile_for

_PROFILE_NAMES = frozenset({"ModelProfile", "is_kimi_model", "profile_for"})


def __getattr__(name: str) -> Any:
    if name in _PROFILE_NAMES:
        # The model profiles load on first use, not at start-up.
        from colibri_router.providers import profiles

        return getattr(profiles, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
