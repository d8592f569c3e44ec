"""Shared builders for the adapter tests: provider bodies, their SSE forms, and a scripted mock upstream.

Bodies are written in the provider's non-streamed shape (``kimi_body``, ``claude_body``); ``kimi_sse`` and
``claude_sse`` turn such a body into the event stream the provider would send for it, so one scripted
answer can be served both ways and the results compared.

``Upstream`` is an ``httpx.MockTransport`` handler with a FIFO of replies; it records every request, every
sleep the adapter asked for (without sleeping) and every log line. ``Flavor`` names what differs between
the Kimi and Claude adapters, so policy tests (retries, errors, redaction) run once per provider.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from colibri_router.adapters import (
    AnthropicApiError,
    AnthropicConfigError,
    AnthropicTool,
    ClaudeCompletionOptions,
    CompletionResult,
    KimiApiError,
    KimiCompletionOptions,
    KimiConfigError,
    create_claude_completion,
    create_claude_completion_with_tools,
    create_kimi_completion,
    create_kimi_completion_with_tools,
)

Wire = Literal["json", "sse"]
WIRES: tuple[Wire, ...] = ("json", "sse")
Reply = Callable[[httpx.Request], httpx.Response]

KIMI_URL = "https://api.moonshot.ai/v1/chat/completions"
CLAUDE_URL = "https://api.anthropic.com/v1/messages"
# Deliberately not shaped like a real key (no sk- prefix): redaction must work on the value itself.
SECRET_KEY = "zq-SECRET-kimi-9f3b7c1e"
SECRET_CLAUDE_KEY = "zq-SECRET-claude-4d2a8e6b"
WEATHER_TOOL: AnthropicTool = {
    "name": "get_weather",
    "description": "Get the weather for a city",
    "input_schema": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City name"},
            "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
        },
        "required": ["location"],
        "additionalProperties": False,
    },
}

# --- Kimi (OpenAI chat completions) ----------------------------------------------------------------------


def kimi_call(call_id: str, name: str, arguments: str | None) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def kimi_body(
    content: str | None = "Hello from Kimi",
    *,
    tool_calls: Sequence[dict[str, Any]] = (),
    finish_reason: str | None = "stop",
    model: str | None = "kimi-k2-0905-preview",
    usage: tuple[int, int] = (11, 7),
) -> dict[str, Any]:
    """A non-streamed ``chat.completion`` body as Moonshot returns it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000}
    if model is not None:
        body["model"] = model
    body["choices"] = [{"index": 0, "message": message, "finish_reason": finish_reason}]
    body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return body


def kimi_sse(body: Mapping[str, Any], piece: int = 4) -> str:
    """The ``chat.completion.chunk`` stream Moonshot sends for ``body``: content and arguments in small
    pieces, usage inside the finishing choice (where Moonshot puts it), then ``[DONE]``."""
    choice = body["choices"][0]
    message = choice["message"]
    head = {"id": body.get("id"), "object": "chat.completion.chunk", "created": 1700000000}
    if "model" in body:
        head["model"] = body["model"]

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, **extra}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": text}) for text in _pieces(message.get("content") or "", piece)]
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        opening = {"index": index, "id": call["id"], "type": "function"}
        chunks.append(chunk({"tool_calls": [{**opening, "function": {"name": function["name"], "arguments": ""}}]}))
        for text in _pieces(function.get("arguments") or "", piece):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]}))
    chunks.append(chunk({}, choice.get("finish_reason"), usage=body.get("usage")))
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def kimi_error(status: int, message: str = "upstream said no", error_type: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type or "invalid_request_error"}}


# --- Claude (Anthropic Messages) -------------------------------------------------------------------------


def claude_text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def claude_tool_use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def claude_body(
    *blocks: dict[str, Any],
    stop_reason: str | None = "end_turn",
    model: str | None = "claude-sonnet-4-5-20250929",
    usage: tuple[int, int] = (13, 5),
) -> dict[str, Any]:
    """A non-streamed Messages body; ``blocks`` default to one text block."""
    body: dict[str, Any] = {"id": "msg_01", "type": "message", "role": "assistant"}
    if model is not None:
        body["model"] = model
    body["content"] = list(blocks) if blocks else [claude_text("Hello from Claude")]
    body["stop_reason"] = stop_reason
    body["stop_sequence"] = None
    body["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
    return body


def claude_sse(body: Mapping[str, Any], piece: int = 4) -> str:
    """The Messages event stream Anthropic sends for ``body``."""
    usage = body.get("usage") or {}
    start = {k: v for k, v in body.items() if k not in {"content", "stop_reason", "usage"}}
    start.update(content=[], stop_reason=None, usage={"input_tokens": usage.get("input_tokens"), "output_tokens": 1})
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(body["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p} for p in _pieces(json.dumps(block["input"]), piece)
            ]
        else:
            opening = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], piece)]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
        )
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    message_delta = {"stop_reason": body.get("stop_reason"), "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": message_delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def claude_error(status: int, message: str = "upstream said no", error_type: str | None = None) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type or "invalid_request_error", "message": message}}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# --- replies -----------------------------------------------------------------------------------------------


def json_reply(body: object, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
    return lambda _request: httpx.Response(status, json=body, headers=headers)


def sse_reply(text: str) -> Reply:
    return lambda _request: httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})


def raw_reply(status: int, text: str, content_type: str = "application/json") -> Reply:
    return lambda _request: httpx.Response(status, text=text, headers={"content-type": content_type})


def raising(exc: Exception) -> Reply:
    def reply(request: httpx.Request) -> httpx.Response:
        raise exc

    return reply


# --- the mock upstream -------------------------------------------------------------------------------------


@dataclass
class Upstream:
    """Answers requests with ``replies`` in order; a request beyond them fails the test."""

    replies: deque[Reply] = field(default_factory=deque)
    requests: list[httpx.Request] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, *replies: Reply) -> Upstream:
        return cls(replies=deque(replies))

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"unexpected request #{len(self.requests)} to {request.url}")
        return self.replies.popleft()(request)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler))

    def seams(self) -> dict[str, Any]:
        """The injection seams of the adapter options (I14), all pointing at this upstream."""
        return {"http_client": self.client(), "sleep": self.sleep, "logger": self.logs.append}

    @property
    def body(self) -> dict[str, Any]:
        """The JSON body of the only request."""
        assert len(self.requests) == 1, f"expected one request, got {len(self.requests)}"
        body: dict[str, Any] = json.loads(self.requests[0].content)
        return body


def without_latency(result: CompletionResult) -> dict[str, Any]:
    return result.model_dump(exclude={"latency_ms"})


# --- the two adapters, side by side ----------------------------------------------------------------------


@dataclass(frozen=True)
class Flavor:
    name: str
    complete: Callable[..., Awaitable[CompletionResult]]
    complete_with_tools: Callable[..., Awaitable[CompletionResult]]
    options: type[KimiCompletionOptions] | type[ClaudeCompletionOptions]
    api_error: type[KimiApiError] | type[AnthropicApiError]
    config_error: type[KimiConfigError] | type[AnthropicConfigError]
    code_prefix: str
    key_variable: str
    base_url_variable: str
    key: str
    text_body: Callable[[str], dict[str, Any]]
    sse: Callable[[Mapping[str, Any]], str]
    error_body: Callable[..., dict[str, Any]]

    def answer(self, body: Mapping[str, Any], wire: Wire = "json") -> Reply:
        return json_reply(body) if wire == "json" else sse_reply(self.sse(body))

    def ok(self, text: str = "fine") -> Reply:
        return json_reply(self.text_body(text))

    def error(
        self,
        status: int,
        message: str = "upstream said no",
        error_type: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        return json_reply(self.error_body(status, message, error_type), status, headers)

    def opts(self, upstream: Upstream, **overrides: Any) -> Any:  # the flavor's own options class
        fields = {"api_key": self.key, **upstream.seams(), **overrides}
        return self.options(**fields)


KIMI = Flavor(
    name="kimi",
    complete=create_kimi_completion,
    complete_with_tools=create_kimi_completion_with_tools,
    options=KimiCompletionOptions,
    api_error=KimiApiError,
    config_error=KimiConfigError,
    code_prefix="KIMI",
    key_variable="COLIBRI_KIMI_API_KEY",
    base_url_variable="COLIBRI_KIMI_BASE_URL",
    key=SECRET_KEY,
    text_body=kimi_body,
    sse=kimi_sse,
    error_body=kimi_error,
)
CLAUDE = Flavor(
    name="claude",
    complete=create_claude_completion,
    complete_with_tools=create_claude_completion_with_tools,
    options=ClaudeCompletionOptions,
    api_error=AnthropicApiError,
    config_error=AnthropicConfigError,
    code_prefix="ANTHROPIC",
    key_variable="ANTHROPIC_API_KEY",
    base_url_variable="ANTHROPIC_BASE_URL",
    key=SECRET_CLAUDE_KEY,
    text_body=lambda text: claude_body(claude_text(text)),
    sse=claude_sse,
    error_body=claude_error,
)
FLAVORS = (KIMI, CLAUDE)
