"""Wires: one pure codec family per API shape, and the table that makes a codec for one call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from colibri_router.providers.profiles import profile_for
from colibri_router.providers.spec import ProviderSpec, WireName
from colibri_router.settings import Settings
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


def codec_for_call(provider: ProviderSpec, model: str, settings: Settings) -> WireCodec:
    """The codec for one call, with the user's codec settings (Kimi ID mode, prompt caching)."""
    return codec_for(provider, model, settings.kimi_tool_ids, prompt_cache=settings.prompt_cache == "auto")


__all__ = ["WIRES", "Dialect", "Encoded", "UpstreamError", "WireCodec", "codec_for", "codec_for_call"]
