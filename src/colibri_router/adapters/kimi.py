"""Moonshot Kimi K2: the contract functions (``create_kimi_completion``...) and Kimi's profile of
quirks on top of the OpenAI chat codec.

The quirks, each handled here once:
- K2 reads earlier tool-call IDs back from its prompt and imitates them; IDs other than
  ``functions.{name}:{idx}`` make it stop calling tools. Every request re-derives K2 IDs from the
  conversation (:func:`ids_for_kimi`), so history from Claude or from hours ago works.
- ``tool_choice`` accepts only ``auto``/``none``: ``required`` and named choices become ``auto``
  plus a user nudge, with a warning.
- Thinking models refuse assistant tool-call turns without ``reasoning_content``.
- Misconfigured or self-hosted endpoints return tool calls as marker text inside ``content``.
- With tool calls present the turn is ``tool_use`` whatever ``finish_reason`` said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from colibri_router.adapters import openai_wire
from colibri_router.adapters.pipeline import CompletionOptions, Encoded, Provider, complete_prompt
from colibri_router.conversation import (
    AnthropicTool,
    AssistantTurn,
    CompletionRequest,
    CompletionResult,
    Message,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
)
from colibri_router.errors import KIMI_ERRORS, ErrorFamily, InvalidRequestError
from colibri_router.settings import reveal
from colibri_router.toolcalls.arguments import parse_arguments
from colibri_router.toolcalls.assembly import OpenAIStreamAssembler, StreamAssembler
from colibri_router.toolcalls.ids import KimiIdMode, ids_for_kimi, is_kimi_model
from colibri_router.toolcalls.k2_markers import contains_k2_markers, parse_k2_markers

DEFAULT_MODEL = "kimi-k2-0905-preview"
FINISH_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}
REASONING_PLACEHOLDER = "(reasoning for this step was not recorded)"
MAX_TOOLS = 128  # Moonshot's documented limit


@dataclass(frozen=True, kw_only=True, slots=True)
class KimiCompletionOptions(CompletionOptions):
    """Options of :func:`create_kimi_completion`; ``sleep`` takes seconds (the contract's delayFn)."""


@dataclass(frozen=True, slots=True)
class KimiCodec:
    id_mode: KimiIdMode = "renumber"
    label: str = "kimi"
    errors: ErrorFamily = KIMI_ERRORS
    max_temperature: float = 1.0  # Moonshot's range is [0, 1]

    def endpoint(self, base_url: str, api_key: str) -> tuple[str, dict[str, str]]:
        return f"{base_url}/chat/completions", {"authorization": f"Bearer {api_key}"}

    def new_assembler(self) -> StreamAssembler:
        return OpenAIStreamAssembler()

    def encode(self, request: CompletionRequest) -> Encoded:
        if len(request.tools) > MAX_TOOLS:
            raise InvalidRequestError(f"Kimi accepts at most {MAX_TOOLS} tools; the call gave {len(request.tools)}")
        warnings: list[str] = []
        history = ids_for_kimi(request.messages, self.id_mode)
        if is_thinking_model(request.model):
            history, filled = _with_reasoning(history)
            if filled:
                warnings.append(
                    f"{filled} assistant tool-call turn(s) had no reasoning; sent a placeholder "
                    f"reasoning_content, which {request.model} requires"
                )
        messages = openai_wire.encode_messages(history, request.system)
        body: dict[str, Any] = {"model": request.model, "messages": messages, "max_tokens": request.max_tokens}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.tools:  # I10: no tools key at all for an empty list
            body["tools"] = openai_wire.encode_tools(request.tools)
            choice, nudge = _tool_choice(request.tool_choice)
            body["tool_choice"] = choice
            if nudge is not None:
                messages.append({"role": "user", "content": nudge})
                warnings.append(
                    f"Kimi K2 does not support tool_choice {_describe(request.tool_choice)}: sent 'auto' "
                    f"and asked the model in a user message to call the tool"
                )
        body["stream"] = True
        return Encoded(body=body, warnings=tuple(warnings))

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        turn = openai_wire.decode_body(body)
        parts = _parse_marker_calls(turn.parts)
        calls = [p for p in parts if isinstance(p, ToolCall)]
        declared = {tool.name for tool in request.tools}
        warnings = tuple(
            f"the model called tool {call.name!r}, which the request did not declare"
            for call in calls
            if call.name not in declared
        )
        stop = "tool_use" if calls else FINISH_REASONS.get(turn.stop_reason or "", turn.stop_reason)
        return replace(turn, parts=tuple(parts), stop_reason=stop, warnings=warnings)


def is_thinking_model(model: str) -> bool:
    return "thinking" in model.lower()


def _with_reasoning(messages: Sequence[Message]) -> tuple[tuple[Message, ...], int]:
    """Give every assistant tool-call turn a reasoning part (Moonshot 400s without one)."""
    filled = 0
    out = []
    for message in messages:
        needs_reasoning = message.role == "assistant" and bool(message.tool_calls())
        if needs_reasoning and not any(isinstance(p, Thinking) for p in message.parts):
            out.append(replace(message, parts=(Thinking(REASONING_PLACEHOLDER), *message.parts)))
            filled += 1
        else:
            out.append(message)
    return tuple(out), filled


def _tool_choice(choice: ToolChoice | None) -> tuple[str, str | None]:
    """Kimi's wire tool_choice, and the user nudge that stands in for a forced choice."""
    if choice is None or choice.mode == "auto":
        return "auto", None
    if choice.mode == "none":
        return "none", None
    if choice.mode == "tool":
        return "auto", f"Answer by calling the tool `{choice.name}`."
    return "auto", "Answer by calling one of the available tools."


def _describe(choice: ToolChoice | None) -> str:
    if choice is not None and choice.mode == "tool":
        return f"{{type: tool, name: {choice.name}}}"
    return repr(choice.mode if choice else "auto")


def _parse_marker_calls(parts: Sequence[Part]) -> list[Part]:
    """Tool calls that arrived as K2 marker text become real calls; the markers leave the text."""
    out: list[Part] = []
    for part in parts:
        if isinstance(part, Text) and contains_k2_markers(part.text):
            text, marker_calls = parse_k2_markers(part.text)
            if text:
                out.append(Text(text))
            out.extend(ToolCall(c.id, c.name, parse_arguments(c.arguments)) for c in marker_calls)
        else:
            out.append(part)
    return out


KIMI = Provider(
    name="kimi",
    default_model=DEFAULT_MODEL,
    errors=KIMI_ERRORS,
    key_variable="COLIBRI_KIMI_API_KEY",
    claims_model=is_kimi_model,
    connection_settings=lambda settings: (reveal(settings.kimi_api_key), settings.kimi_base_url),
    make_codec=lambda settings: KimiCodec(id_mode=settings.kimi_tool_ids),
)


async def create_kimi_completion(prompt: str, options: KimiCompletionOptions | None = None) -> CompletionResult:
    """Send one user prompt to Kimi and return the normalized result."""
    return await complete_prompt(KIMI, prompt, (), options)


async def create_kimi_completion_with_tools(
    prompt: str,
    tools: Sequence[AnthropicTool],
    options: KimiCompletionOptions | None = None,
) -> CompletionResult:
    """Like :func:`create_kimi_completion`, offering Anthropic-shape ``tools`` to the model."""
    return await complete_prompt(KIMI, prompt, tools, options)
