"""Test helper: a built-in provider's codec for whatever model each request names (the registry picks
the model's profile per call, as the router does). Prompt caching is off unless asked for, so the
codec tests read bodies without cache breakpoints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from colibri_router.conversation import AssistantTurn, CompletionRequest
from colibri_router.providers import BUILTIN
from colibri_router.toolcalls.ids import KimiIdMode
from colibri_router.wires import Encoded, WireCodec, codec_for


class ProviderCodec:
    def __init__(self, provider: str, id_mode: KimiIdMode = "renumber", *, prompt_cache: bool = False) -> None:
        self.provider = BUILTIN[provider]
        self.id_mode = id_mode
        self.prompt_cache = prompt_cache

    def for_model(self, model: str) -> WireCodec:
        return codec_for(self.provider, model, self.id_mode, prompt_cache=self.prompt_cache)

    def endpoint(self, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
        model = self.provider.default_model or "model"
        return self.for_model(model).endpoint(base_url, api_key, model)

    def encode(self, request: CompletionRequest) -> Encoded:
        return self.for_model(request.model).encode(request)

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        return self.for_model(request.model).decode(body, request)
