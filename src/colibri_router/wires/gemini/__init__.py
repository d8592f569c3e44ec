"""Gemini ``generateContent`` codec: our conversation ⇄ Gemini's REST JSON (v1beta). Pure, no I/O.

Sources: https://ai.google.dev/api/generate-content. The request is built in :mod:`.contents` (history) and
:mod:`.thinking` (``reasoning``); answers are read in :mod:`.response`, errors in :mod:`.failures`. Calls
stream from ``{base}/models/{model}:streamGenerateContent?alt=sse`` (without ``alt=sse`` the stream is one
JSON array no SSE reader sees).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from colibri_router.conversation import AssistantTurn, CompletionRequest, ToolChoice, ToolSpec
from colibri_router.toolcalls.assembly.base import StreamAssembler
from colibri_router.wires.base import Dialect, Encoded, UpstreamError, listed_names
from colibri_router.wires.gemini.assembly import GeminiStreamAssembler
from colibri_router.wires.gemini.contents import encode_contents
from colibri_router.wires.gemini.failures import read_error
from colibri_router.wires.gemini.response import decode_response
from colibri_router.wires.gemini.thinking import thinking_config
from colibri_router.wires.output import gemini_generation

CALLING_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}


@dataclass(frozen=True, slots=True)
class GeminiCodec:
    dialect: Dialect

    def endpoint(self, base_url: str, api_key: str | None, model: str) -> tuple[str, dict[str, str]]:
        headers = self.dialect.headers(api_key, "x-goog-api-key", "{}")
        return f"{base_url}/{model_path(model)}:streamGenerateContent?alt=sse", headers

    def model_list_endpoint(self, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
        _, headers = self.endpoint(base_url, api_key, "")
        return f"{base_url}/models", headers

    def decode_model_list(self, body: Mapping[str, Any]) -> list[str]:
        return listed_names(body, "models", "name", prefix="models/")

    def encode(self, request: CompletionRequest) -> Encoded:
        contents, warnings = encode_contents(request.messages)
        body: dict[str, Any] = {"contents": contents}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        if request.tools:
            body["tools"] = [{"functionDeclarations": function_declarations(request.tools)}]
            if request.tool_choice is not None:
                body["toolConfig"] = {"functionCallingConfig": calling_config(request.tool_choice)}
        generation: dict[str, Any] = {"maxOutputTokens": request.max_tokens}
        if request.temperature is not None:
            generation["temperature"] = request.temperature
        thinking, thinking_warnings = thinking_config(request.model, request.reasoning)
        if thinking is not None:
            generation["thinkingConfig"] = thinking
        if request.output is not None:
            generation.update(gemini_generation(request.output))
        body["generationConfig"] = generation
        return Encoded(body=body, warnings=(*warnings, *thinking_warnings))

    def new_assembler(self) -> StreamAssembler:
        return GeminiStreamAssembler()

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        return decode_response(body, self.dialect.errors)

    def read_error(self, status: int, headers: Mapping[str, str], body: bytes) -> UpstreamError:
        return read_error(status, headers, body)


def make_codec(dialect: Dialect) -> GeminiCodec:
    return GeminiCodec(dialect)


def model_path(model: str) -> str:
    """``gemini-2.5-flash`` → ``models/gemini-2.5-flash``; a name that already has its collection
    (``models/…``, ``tunedModels/…``) is kept."""
    name = model.strip("/")
    return quote(name if "/" in name else f"models/{name}", safe="/")


def function_declarations(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The tool's JSON Schema goes through untouched as ``parametersJsonSchema`` (real JSON Schema;
    ``parameters`` would take only Google's OpenAPI subset)."""
    declarations = []
    for tool in tools:
        declaration: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            declaration["description"] = tool.description
        declaration["parametersJsonSchema"] = dict(tool.input_schema)
        declarations.append(declaration)
    return declarations


def calling_config(choice: ToolChoice) -> dict[str, Any]:
    config: dict[str, Any] = {"mode": CALLING_MODES[choice.mode]}
    if choice.mode == "tool" and choice.name is not None:
        config["allowedFunctionNames"] = [choice.name]
    return config
