"""Wires: one pure codec family per API shape, each in its own folder (``wires/<name>/``: the codec,
``make_codec``, and its stream assembler), and the table that makes a codec for one call.

The table is read from the wire registry (:data:`colibri_router.providers.wires.WIRE_RECORDS`): each
native wire's folder is imported here, all at once, when the router is (the server's first call,
or ``serve --http`` before it listens), never at start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import cast

from colibri_router.providers.profiles import profile_for
from colibri_router.providers.spec import ProviderSpec, WireName
from colibri_router.providers.wires import WIRE_RECORDS
from colibri_router.settings import Settings
from colibri_router.toolcalls.ids import KimiIdMode
from colibri_router.wires.base import Dialect, Encoded, UpstreamError, WireCodec

CodecFactory = Callable[[Dialect], WireCodec]

WIRES: Mapping[WireName, CodecFactory] = MappingProxyType(
    {
        record.name: cast(CodecFactory, importlib.import_module(record.codec_module).make_codec)
        for record in WIRE_RECORDS
        if record.native
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


__all__ = ["WIRES", "CodecFactory", "Dialect", "Encoded", "UpstreamError", "WireCodec", "codec_for", "codec_for_call"]
