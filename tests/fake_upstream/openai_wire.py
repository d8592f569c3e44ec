"""The OpenAI chat-completions wire: body builders, the chunk stream generated from a body, error shapes.

Shared by every host that speaks it (OpenAI, Moonshot, Mistral, OpenRouter, Groq, Together, Fireworks,
SiliconFlow, DeepSeek, vLLM, LM Studio, any compatible box); what differs per host is data given to
``openai_sse_events`` (where usage goes, whole or fragmented tool calls) and to ``openai_error_body``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .ids import serial
from .replies import ErrorReply, MessageReply, pieces

OPENAI_MODEL = "gpt-5.4-mini"
MISTRAL_MODEL = "mistral-small-latest"

ToolCallSpec = tuple[str | None, str, str]
"""``(id, name, arguments_json_text)``; an ``id`` of None leaves the ID out (vLLM streams some so)."""

FinishUsage = Literal["usage", "x_groq"]
ErrorShape = Literal["openai", "moonshot", "mistral", "openrouter", "vllm"]


def openai_text(
    text: str,
    *,
    model: str = OPENAI_MODEL,
    finish_reason: str = "stop",
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A chat.completion with a text answer; ``reasoning`` goes in ``reasoning_field`` (hosts differ)."""
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    body = chat_completion(msg, model, finish_reason, usage, reasoning, reasoning_field)
    return MessageReply(body, delay_s, hold_open_s)


def openai_tool_calls(
    calls: Iterable[ToolCallSpec],
    *,
    text: str | None = None,
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    model: str = OPENAI_MODEL,
    finish_reason: str = "tool_calls",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A chat.completion calling tools; ``calls`` are ``(id, name, arguments_json_text)`` (see ``ids``).

    Without ``text`` the content is null, as OpenAI sends it.
    """
    msg = {"role": "assistant", "content": text, "tool_calls": tool_call_objects(calls)}
    body = chat_completion(msg, model, finish_reason, usage, reasoning, reasoning_field)
    return MessageReply(body, delay_s, hold_open_s)


def mistral_text(
    text: str,
    *,
    thinking: str | None = None,
    model: str = MISTRAL_MODEL,
    finish_reason: str = "stop",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A Mistral chat.completion; with ``thinking`` the content is Mistral's list of chunks (thinking, text)."""
    msg = {"role": "assistant", "content": mistral_content(text, thinking)}
    return MessageReply(chat_completion(msg, model, finish_reason, usage), delay_s, hold_open_s)


def mistral_tool_calls(
    calls: Iterable[ToolCallSpec],
    *,
    text: str | None = None,
    thinking: str | None = None,
    model: str = MISTRAL_MODEL,
    finish_reason: str = "tool_calls",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A Mistral chat.completion calling tools (IDs: ``mistral_call_id()``, 9 letters or digits)."""
    content = mistral_content(text or "", thinking)
    msg = {"role": "assistant", "content": content, "tool_calls": tool_call_objects(calls)}
    return MessageReply(chat_completion(msg, model, finish_reason, usage), delay_s, hold_open_s)


def mistral_content(text: str, thinking: str | None) -> str | list[dict[str, Any]]:
    if thinking is None:
        return text
    chunks: list[dict[str, Any]] = [{"type": "thinking", "thinking": [{"type": "text", "text": thinking}]}]
    return [*chunks, {"type": "text", "text": text}] if text else chunks


def tool_call_objects(calls: Iterable[ToolCallSpec]) -> list[dict[str, Any]]:
    objects = []
    for call_id, name, arguments in calls:
        call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
        objects.append(call if call_id is None else {"id": call_id, **call})
    return objects


def chat_completion(
    msg: dict[str, Any],
    model: str,
    finish_reason: str,
    usage: tuple[int, int],
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
) -> dict[str, Any]:
    """The non-streamed chat.completion body around one assistant message."""
    if reasoning is not None:
        msg[reasoning_field] = reasoning
    prompt, completion = usage
    return {
        "id": f"chatcmpl-fake-{serial()}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


# ---------------------------------------------------------------------------------------------------------
# The stream generated from a body


REASONING_FIELDS = ("reasoning_content", "reasoning")


def openai_sse_events(
    body: Mapping[str, Any],
    *,
    usage_tail: bool = True,
    finish_usage: FinishUsage | None = None,
    whole_tool_calls: bool = False,
    continuation_name: str | None = None,
) -> list[str]:
    """The ``data:`` payloads of the chat.completion.chunk stream a host would send for ``body``.

    Role chunk, reasoning deltas (in the field the body uses), content deltas (Mistral's list content:
    thinking chunks as lists, then text as strings), per tool call one chunk with index/id/name and then
    the arguments in fragments (``whole_tool_calls``: one chunk with everything, as Mistral sends them;
    ``continuation_name=""``: fragments repeat ``name: ""``, as LM Studio sends them), a finish chunk
    (carrying usage under ``finish_usage``: ``"usage"`` as Mistral, ``"x_groq"`` as Groq), the usage
    chunk with ``choices: []`` if ``usage_tail``, and ``[DONE]``.
    """
    choice = body["choices"][0]
    msg = choice["message"]
    head = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
        choices = [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        return json.dumps({**head, "choices": choices, **extra})

    events = [chunk({"role": "assistant", "content": ""})]
    for field in REASONING_FIELDS:
        events += [chunk({field: p}) for p in pieces(msg.get(field) or "")]
    events += [chunk({"content": delta}) for delta in _content_deltas(msg.get("content"))]
    for index, call in enumerate(msg.get("tool_calls") or []):
        events += [
            chunk({"tool_calls": [part]}) for part in _call_deltas(index, call, whole_tool_calls, continuation_name)
        ]
    finish_extra: dict[str, Any] = {}
    if finish_usage == "usage":
        finish_extra["usage"] = body["usage"]
    elif finish_usage == "x_groq":
        finish_extra["x_groq"] = {"id": f"req_fake_{serial()}", "usage": body["usage"]}
    events.append(chunk({}, choice["finish_reason"], **finish_extra))
    if usage_tail:
        events.append(json.dumps({**head, "choices": [], "usage": body["usage"]}))
    events.append("[DONE]")
    return events


def _content_deltas(content: Any) -> list[Any]:
    if isinstance(content, str):
        return pieces(content)
    deltas: list[Any] = []
    for part in content if isinstance(content, list) else []:
        if part.get("type") == "thinking":
            text = "".join(p.get("text", "") for p in part["thinking"])
            deltas += [[{"type": "thinking", "thinking": [{"type": "text", "text": p}]}] for p in pieces(text)]
        elif part.get("type") == "text":
            deltas += pieces(part["text"])
    return deltas


def _call_deltas(
    index: int, call: Mapping[str, Any], whole: bool, continuation_name: str | None
) -> list[dict[str, Any]]:
    function = call["function"]
    arguments = function["arguments"] if isinstance(function["arguments"], str) else json.dumps(function["arguments"])
    first: dict[str, Any] = {"index": index, "type": "function"}
    if "id" in call:
        first["id"] = call["id"]
    if whole:
        return [{**first, "function": {"name": function["name"], "arguments": arguments}}]
    first["function"] = {"name": function["name"], "arguments": ""}
    rest: dict[str, Any] = {} if continuation_name is None else {"name": continuation_name}
    return [first] + [{"index": index, "function": {**rest, "arguments": p}} for p in pieces(arguments)]


def openai_error_event(
    message: str,
    *,
    code: str | int | None = None,
    error_type: str | None = None,
    finish_reason: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """A mid-stream error ``data:`` payload: top-level ``error`` (OpenAI, OpenRouter after a 200).

    With ``finish_reason`` (OpenRouter's ``"error"``) the event also carries a choice ending so.
    """
    inner: dict[str, Any] = {"message": message, **({"type": error_type} if error_type else {})}
    event: dict[str, Any] = {"error": {**inner, "code": code, **(extra or {})}}
    if finish_reason is not None:
        event["choices"] = [{"index": 0, "delta": {"content": ""}, "finish_reason": finish_reason}]
    return json.dumps(event)


# ---------------------------------------------------------------------------------------------------------
# Error bodies


_OPENAI_TYPES = {401: "invalid_request_error", 403: "permission_error", 404: "invalid_request_error", 429: "requests"}
_MOONSHOT_TYPES = {401: "invalid_authentication_error", 429: "rate_limit_reached_error"}


def openai_error_body(error: ErrorReply, shape: ErrorShape) -> dict[str, Any]:
    """``error`` in a host's shape.

    - ``openai`` (also Groq, Together, Fireworks, SiliconFlow, DeepSeek, LM Studio, vLLM since 2025-08):
      ``{"error": {"message", "type", "param", "code"}}``
    - ``moonshot``: ``{"error": {"type", "message"}}``, plus ``code``/``param`` only when given
    - ``mistral``: ``{"object": "error", "message", "type", "param", "code"}``
    - ``openrouter``: ``{"error": {"code": <int>, "message"}}`` (``metadata`` through ``extra``)
    - ``vllm``: the ``openai`` shape, or with ``variant="flat"`` ``{"object": "error", "message", "type",
      "param", "code": <status>}`` (vLLM before 2025-08)
    """
    variants = {"vllm": {None, "flat"}}.get(shape, {None})
    if error.variant not in variants:
        raise ValueError(f"error variant {error.variant!r} is not one of {sorted(map(str, variants))} for {shape}")
    status = error.status
    server_default = "server_error" if status >= 500 else "invalid_request_error"
    if shape == "moonshot":
        inner: dict[str, Any] = {"type": error.error_type or _MOONSHOT_TYPES.get(status, server_default)}
        inner["message"] = error.message
        inner |= {k: v for k, v in (("code", error.code), ("param", error.param)) if v is not None}
        return {"error": inner | dict(error.extra)}
    if shape == "openrouter":
        return {
            "error": {"code": error.code if error.code is not None else status, "message": error.message, **error.extra}
        }
    error_type = error.error_type or _OPENAI_TYPES.get(status, server_default)
    fields = {"message": error.message, "type": error_type, "param": error.param, "code": error.code}
    if shape == "mistral":
        return {"object": "error", **fields, **error.extra}
    if shape == "vllm" and error.variant == "flat":
        return {"object": "error", **fields, "code": error.code if error.code is not None else status, **error.extra}
    return {"error": {**fields, **error.extra}}


def openai_model_list(models: Iterable[str], owner: str) -> dict[str, Any]:
    data = [{"id": model, "object": "model", "created": 1_700_000_000, "owned_by": owner} for model in models]
    return {"object": "list", "data": data}
