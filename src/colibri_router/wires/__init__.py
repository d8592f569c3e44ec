"""Wires: one pure codec family per API shape, and the table that makes a codec for one call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from colibri_router.providers.profiles import profile_for
from colibri_router.providers.spec import ProviderSpec, WireName
from colibri_router.toolcalls.ids import KimiIdMode
from colibri_router.wires import anthropic, cohere, gemini, ollama, openai
from colibri_router.wires.base import Dialect, Encoded, UpstreamError, WireCodec

WIRES: Mapping[WireName, Callable[[Dialect], WireCodec]] = MappingProxyType(
    {
        "openai": openai.make_codec,
        "anthropic": anthropic.make_codec,
        "gemini": gemini.make_codec,
        "cohere": cohere.make_codec,
        "ollama": ollama.make_codec,
    }
)


def codec_for(
    provider: ProviderSpec, model: str, kimi_id_mode: KimiIdMode = "renumber", *, prompt_cache: bool = True
) -> WireCodec:
    """The codec for one call: the provider's wire, shaped by the provider and the model's profile."""
    return WIRES[provider.wire](Dialect(provider, profile_for(model), kimi_id_mode, prompt_cache))


__all__ = ["WIRES", "Dialect", "Encoded", "UpstreamError", "WireCodec", "codec_for"]
