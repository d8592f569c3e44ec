"""Providers as data: the registry of entries (wire and host), their host quirks, and model profiles."""

from colibri_router.providers.profiles import ModelProfile, is_kimi_model, profile_for
from colibri_router.providers.registry import (
    BUILTIN,
    Choice,
    Connection,
    Registry,
    configured,
    configured_base_url,
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
    "connect",
    "is_kimi_model",
    "load_registry",
    "profile_for",
    "provider_names",
    "usable_providers",
]
