"""The OpenAI chat-completions wire: Moonshot, OpenAI, Mistral, OpenRouter, Groq, Together, Fireworks,
SiliconFlow, DeepSeek, vLLM, LM Studio and any OpenAI-compatible server.

One codec, shaped by its :class:`~colibri_router.wires.base.Dialect`: the host's quirks (the
max-tokens field, ``stream_options``, the reasoning field, Mistral's strict schema and message order)
and the model's profile (Kimi K2's IDs, tool_choice limits, reasoning replay and marker parsing;
OpenAI reasoning models' parameters; Mistral's 9-character IDs), wherever the model is served.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from colibri_router.conversation import AssistantTurn, CompletionRequest, Message, Part, ToolCall, ToolChoice
from colibri_router.toolcalls.assembly import StreamAssembler
from colibri_router.toolcalls.ids import ids_for_kimi, ids_for_mistral, ids_for_openai
from colibri_router.wires import rules
from colibri_router.wires.base import Dialect, Encoded, UpstreamError, listed_names
from colibri_router.wires.openai.assembly import OpenAIStreamAssembler
from colibri_router.wires.openai.decode import FINISH_REASONS, read_body
from colibri_router.wires.openai.errors import read_error
from colibri_router.wires.openai.messages import encode_messages, encode_tools
from colibri_router.wires.output import openai_response_format
from colibri_router.wires.reasoning import effort_for

__all__ = ["OpenAICodec", "make_codec"]


@dataclass(frozen=True, slots=True)
class OpenAICodec:
    dialect: Dialect

    def endpoint(self, base_url: str, api_key: str | None, model: str) -> tuple[str, dict[str, str]]:
        return f"{base_url}/chat/completions", self.dialect.headers(api_key)

    def new_assembler(self) -> StreamAssembler:
        return OpenAIStreamAssembler()

    def encode(self, request: CompletionRequest) -> Encoded:
        profile, host = self.dialect.profile, self.dialect.provider.quirks
        self.dialect.check_tool_count(request)
        warnings: list[str] = []
        history = self._history(request.messages)
        if profile.replays_reasoning:
            history, filled = rules.with_reasoning_placeholders(history)
            if filled:
                warnings.append(
                    f"{filled} assistant tool-call turn(s) had no reasoning; sent a placeholder "
                    f"{host.reasoning_field}, which {request.model} requires"
                )
        replays = profile.sends_reasoning and not host.documented_fields_only
        messages = encode_messages(
            history,
            request.system,
            reasoning_field=host.reasoning_field if replays else None,
            bridge_user_after_tool=host.no_user_after_tool,
        )
        max_tokens_field = host.max_tokens_field or profile.max_tokens_field or "max_tokens"
        body: dict[str, Any] = {"model": request.model, "messages": messages, max_tokens_field: request.max_tokens}
        if request.temperature is not None:
            if profile.sampling:
                body["temperature"] = request.temperature
            else:
                warnings.append(f"temperature not sent: {request.model} accepts only its default")
        repairs: tuple[str, ...] = ()
        if request.tools:  # no tools key at all for an empty list
            tool_warnings, repairs = self._encode_tools(request, body, messages)
            warnings.extend(tool_warnings)
        warnings.extend(self._encode_reasoning(request, body))
        response_format = openai_response_format(request.output) if request.output else None
        if response_format is not None:
            body["response_format"] = response_format
        body["stream"] = True
        if host.include_usage:
            body["stream_options"] = {"include_usage": True}
        return Encoded(body=body, warnings=tuple(warnings), repairs=repairs)

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        read = read_body(body)
        parts: Sequence[Part] = read.parts
        found_markers = False
        if self.dialect.profile.parses_markers:
            parts, found_markers = rules.parse_marker_calls(parts)
        calls = [p for p in parts if isinstance(p, ToolCall)]
        warnings = rules.undeclared_call_warnings(calls, {tool.name for tool in request.tools}) if calls else ()
        stop = "tool_use" if calls else FINISH_REASONS.get(read.finish_reason or "", read.finish_reason)
        # One turn built once: a frozen dataclass costs about 1 us to build, dataclasses.replace more.
        return AssistantTurn(
            parts=tuple(parts),
            stop_reason=stop,
            model=read.model,
            usage=read.usage,
            warnings=warnings,
            repairs=("markers_parsed",) if found_markers else (),
        )

    def read_error(self, status: int, headers: Mapping[str, str], body: bytes) -> UpstreamError:
        return read_error(status, headers, body)

    def model_list_endpoint(self, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
        _, headers = self.endpoint(base_url, api_key, "")
        return f"{base_url}/models", headers

    def decode_model_list(self, body: Mapping[str, Any]) -> list[str]:
        return listed_names(body, "data", "id")

    def _history(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """The conversation under the IDs this model and host accept (derived afresh every request)."""
        match self.dialect.profile.ids:
            case "k2":
                return ids_for_kimi(messages, self.dialect.kimi_id_mode)
            case "mistral9":
                return ids_for_mistral(messages)
            case _:
                return ids_for_openai(messages)

    def _encode_tools(
        self, request: CompletionRequest, body: dict[str, Any], messages: list[dict[str, Any]]
    ) -> tuple[list[str], tuple[str, ...]]:
        """Tools and tool_choice into ``body``; returns the warnings and the repairs made."""
        profile, host = self.dialect.profile, self.dialect.provider.quirks
        choice = request.tool_choice
        if choice is not None and choice.mode == "none" and host.none_drops_tools:
            return [f"tool_choice none: the tools were left out ({self.dialect.label} garbles answers otherwise)"], ()
        body["tools"] = encode_tools(request.tools)
        nudge = None if profile.forced_tool_choice else rules.tool_choice_nudge(choice)
        if nudge is not None:
            body["tool_choice"] = "auto"
            messages.append({"role": "user", "content": nudge})
            warning = (
                f"{request.model} does not support tool_choice {rules.describe_choice(choice)}: sent 'auto' "
                f"and asked the model in a user message to call the tool"
            )
            return [warning], ("tool_choice_nudged",)
        body["tool_choice"] = self._tool_choice(choice)
        return [], ()

    def _tool_choice(self, choice: ToolChoice | None) -> str | dict[str, Any]:
        if choice is None or choice.mode == "auto":
            return "auto"
        if choice.mode == "none":
            return "none"
        if choice.mode == "required":
            return self.dialect.provider.quirks.required_tool_choice
        return {"type": "function", "function": {"name": choice.name}}

    def _encode_reasoning(self, request: CompletionRequest, body: dict[str, Any]) -> list[str]:
        if request.reasoning is None:
            return []
        control = self.dialect.provider.quirks.reasoning_control
        if control == "openrouter":
            body["reasoning"] = {"effort": "none" if request.reasoning == "off" else request.reasoning}
            return []
        effort, warning = effort_for(request.reasoning, request.model, self.dialect.profile)
        if effort is not None and control == "reasoning_effort":
            body["reasoning_effort"] = effort
        return [warning] if warning else []


def make_codec(dialect: Dialect) -> OpenAICodec:
    return OpenAICodec(dialect)
