"""Cohere v2 chat codec: our conversation ⇄ ``POST {base}/v2/chat`` JSON. Pure, no I/O.

Sources: https://docs.cohere.com/reference/chat. Rules handled here once:
- ``tool_choice`` takes only ``REQUIRED`` or ``NONE`` (auto is the field left out); a named tool is
  sent as that tool alone plus ``REQUIRED``;
- the ``tool_plan`` (the model's narration before calling tools) and thinking content come back as
  reasoning; both are replayed to Cohere in their own fields, marked as Cohere's with a
  :class:`ProviderState`, and never to another provider as anything but reasoning text;
- ``finish_reason`` ``ERROR`` and ``TIMEOUT`` are failures, not answers;
- usage counts come as floats in ``usage.tokens``; a 429 that is the trial key's monthly cap is not
  retried.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from colibri_router.conversation import (
    AssistantTurn,
    CompletionRequest,
    Media,
    Message,
    Part,
    ProviderState,
    Reasoning,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from colibri_router.errors import InvalidRequestError, MalformedResponse
from colibri_router.providers.profiles import model_segment
from colibri_router.toolcalls.arguments import arguments_object
from colibri_router.toolcalls.assembly.base import StreamAssembler, as_object, as_text
from colibri_router.wires.base import Dialect, Encoded, UpstreamError, listed_names, nested_error
from colibri_router.wires.cohere.assembly import CohereStreamAssembler
from colibri_router.wires.output import cohere_response_format
from colibri_router.wires.rules import (
    EMPTY_TOOL_RESULT,
    ERROR_RESULT_PREFIX,
    THINKING_BUDGETS,
    function_tool_calls,
    function_tools,
    user_content,
)

WIRE = "cohere"
KIND = "kind"  # ProviderState key: which field of Cohere's assistant message a reasoning part came from
THINKING = "thinking"
TOOL_PLAN = "tool_plan"
FINISH_REASONS = {
    "COMPLETE": "end_turn",
    "STOP_SEQUENCE": "stop_sequence",
    "MAX_TOKENS": "max_tokens",
    "TOOL_CALL": "tool_use",
}
# The same budgets `reasoning` means on every budget-based provider.
# Models with a reasoning switch (on by default); the others do not reason (full match, case-insensitive).
REASONING_MODELS = re.compile(r"command-a-(?:reasoning|plus).*", re.IGNORECASE)
# A 429 that time will not cure: the trial key's monthly cap (the per-minute one passes).
MONTHLY_QUOTA_PHRASES = ("api calls / month",)


@dataclass(frozen=True, slots=True)
class CohereCodec:
    dialect: Dialect

    def endpoint(self, base_url: str, api_key: str | None, model: str) -> tuple[str, dict[str, str]]:
        return f"{base_url}/v2/chat", self.dialect.headers(api_key)

    def model_list_endpoint(self, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
        _, headers = self.endpoint(base_url, api_key, "")
        return f"{base_url}/v1/models", headers

    def decode_model_list(self, body: Mapping[str, Any]) -> list[str]:
        return listed_names(body, "models", "name")

    def encode(self, request: CompletionRequest) -> Encoded:
        body: dict[str, Any] = {"model": request.model, "messages": encode_messages(request.messages, request.system)}
        if request.tools:
            tools, tool_choice = _tools_and_choice(request)
            body["tools"] = function_tools(tools)
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        thinking, warnings = thinking_field(request.model, request.reasoning)
        if thinking is not None:
            body["thinking"] = thinking
        response_format = cohere_response_format(request.output) if request.output else None
        if response_format is not None:
            body["response_format"] = response_format
        body["stream"] = True
        return Encoded(body=body, warnings=warnings)

    def new_assembler(self) -> StreamAssembler:
        return CohereStreamAssembler()

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        finish_reason = as_text(body.get("finish_reason")) or None
        if finish_reason == "ERROR":
            raise self.dialect.errors.api("Cohere ended the answer with finish_reason ERROR", status=200)
        if finish_reason == "TIMEOUT":
            # The generation ran out of Cohere's own time: partial output is no answer. Retrying may
            # help (unlike ERROR), should the caller retry at this point. The 200 says nothing of the
            # kind: the finish reason does (a timeout, streamed or not).
            raise self.dialect.errors.api(
                "Cohere stopped generating: the request timed out upstream (finish_reason TIMEOUT)",
                status=200,
                error_type="TIMEOUT",
                retryable=True,
                kind="TIMEOUT",
            )
        message = body.get("message")
        if not isinstance(message, dict):
            raise MalformedResponse("the chat response has no message object")
        parts = decode_message(message)
        calls = any(isinstance(part, ToolCall) for part in parts)
        stop = FINISH_REASONS.get(finish_reason or "", finish_reason)
        return AssistantTurn(
            parts=tuple(parts),
            stop_reason="tool_use" if calls and stop in {"end_turn", None} else stop,
            model=None,  # Cohere's response does not name the model
            usage=decode_usage(body.get("usage")),
        )

    def read_error(self, status: int, headers: Mapping[str, str], body: bytes) -> UpstreamError:
        error = nested_error(body, headers)  # flat {"message": ...}, sometimes with an "id"
        if status == 429 and any(phrase in error.message.lower() for phrase in MONTHLY_QUOTA_PHRASES):
            return UpstreamError(message=error.message, error_type="monthly_quota", retryable=False)
        return error


def make_codec(dialect: Dialect) -> CohereCodec:
    return CohereCodec(dialect)


def _tools_and_choice(request: CompletionRequest) -> tuple[Sequence[ToolSpec], str | None]:
    choice = request.tool_choice
    if choice is None or choice.mode == "auto":
        return request.tools, None
    if choice.mode == "none":
        return request.tools, "NONE"
    if choice.mode == "required":
        return request.tools, "REQUIRED"
    named = [tool for tool in request.tools if tool.name == choice.name]
    if not named:
        raise InvalidRequestError(f"tool_choice names tool {choice.name!r}, which is not among the request's tools")
    return named, "REQUIRED"


def thinking_field(model: str, reasoning: Reasoning | None) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    if reasoning is None:
        return None, ()
    if not REASONING_MODELS.fullmatch(model_segment(model)):
        if reasoning == "off":
            return None, ()  # a model that does not reason honours "off" as it is
        return None, (f"reasoning {reasoning!r} not applied: {model} does not reason; sent no thinking",)
    if reasoning == "off":
        return {"type": "disabled"}, ()
    return {"type": "enabled", "token_budget": THINKING_BUDGETS[reasoning]}, ()


def encode_messages(messages: Sequence[Message], system: str | None) -> list[dict[str, Any]]:
    encoded: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            assistant = _assistant_message(message.parts)
            if assistant is not None:
                encoded.append(assistant)
        else:
            encoded.extend(_user_messages(message.parts))
    return encoded


def _assistant_message(parts: Sequence[Part]) -> dict[str, Any] | None:
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": part.text}
        for part in parts
        if isinstance(part, Thinking) and _kind(part) == THINKING and part.text
    ]
    text = "".join(part.text for part in parts if isinstance(part, Text))
    if text:
        content.append({"type": "text", "text": text})
    calls = [part for part in parts if isinstance(part, ToolCall)]
    if not text and not calls:
        return None  # reasoning alone is no turn Cohere could read
    message: dict[str, Any] = {"role": "assistant"}
    if content:
        message["content"] = content
    if calls:
        plan = "".join(p.text for p in parts if isinstance(p, Thinking) and _kind(p) == TOOL_PLAN)
        if plan:
            message["tool_plan"] = plan
        message["tool_calls"] = function_tool_calls(calls)
    return message


def _kind(part: Thinking) -> str | None:
    return part.state.get(WIRE, KIND) if part.state is not None else None


def _user_messages(parts: Sequence[Part]) -> list[dict[str, Any]]:
    """Tool results first, as ``tool`` messages right after the assistant turn that made the calls;
    then the user's text as one message."""
    messages: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ToolResult):
            content = part.content if part.content.strip() else EMPTY_TOOL_RESULT
            if part.is_error:
                # Cohere's tool messages have no error flag; say it in the text the model reads.
                content = ERROR_RESULT_PREFIX + content
            messages.append({"role": "tool", "tool_call_id": part.call_id, "content": content})
    user = user_content(parts, _media_part)
    if user:
        messages.append({"role": "user", "content": user})
    return messages


def _media_part(media: Media) -> dict[str, Any]:
    """Cohere's vision models read images as ``image_url`` parts (a data URL); PDFs reach Cohere as
    their text (the router extracts it), never as a part."""
    if media.kind != "image":
        raise InvalidRequestError("Cohere takes no PDF parts: the router sends a PDF's text instead")
    return {"type": "image_url", "image_url": {"url": media.data_url()}}


def decode_message(message: Mapping[str, Any]) -> list[Part]:
    parts: list[Part] = []
    content = message.get("content") or []
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise MalformedResponse("message.content is neither a list nor a string")
    for item in content:
        block = as_object(item)
        if block.get("type") == "thinking" and (thinking := as_text(block.get("thinking"))):
            parts.append(Thinking(thinking, state=ProviderState(WIRE, {KIND: THINKING})))
        elif block.get("type") == "text" and (text := as_text(block.get("text"))):
            parts.append(Text(text))
    if plan := as_text(message.get("tool_plan")):
        parts.append(Thinking(plan, state=ProviderState(WIRE, {KIND: TOOL_PLAN})))
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise MalformedResponse("message.tool_calls is not a list")
    for raw in raw_calls:
        function = as_object(as_object(raw).get("function"))
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise MalformedResponse("a tool call has no function name")
        parsed = arguments_object(function.get("arguments"))
        parts.append(ToolCall(id=as_text(as_object(raw).get("id")), name=name, arguments=parsed))
    return parts


def decode_usage(raw: object) -> Usage:
    """``usage.tokens`` counts what the model read and wrote (``billed_units`` is what was charged,
    which may leave out template tokens); both come as floats."""
    usage = as_object(raw)
    tokens = as_object(usage.get("tokens")) or as_object(usage.get("billed_units"))
    return Usage.of(
        _whole(tokens.get("input_tokens")),
        _whole(tokens.get("output_tokens")),
        cached=_whole(usage.get("cached_tokens")),
    )


def _whole(value: object) -> object:
    """A float count such as ``12.0`` as the int it is; anything else unchanged (Usage.of reads it)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
