"""A scripted loopback model for the command-line agents: the three APIs they talk to, on 127.0.0.1.

Claude Code speaks Anthropic Messages (``ANTHROPIC_BASE_URL``), Codex the Responses API (a
``model_providers`` entry in its config), Gemini CLI generateContent (``GOOGLE_GEMINI_BASE_URL``).
Each route answers the agent's main requests (those that declare tools) from a script of turns,
in order: :func:`say` (a final answer, with optional reasoning) or :func:`call` (one tool call the
agent should run). Side requests without tools (titles, summaries, quota probes) get a short text
answer and consume nothing. Every request is recorded; a request without the expected key is
refused with the service's 401, like the real one. ``limit(...)`` scripts a usage-limit answer.

Strict where the agents' behaviour is what the tests read: tool results the agent sends back are
recorded (``tool_results``) so a test can see that a write or a shell command was refused.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

API_KEY = "sk-scripted-agent-key"
_ids = itertools.count(1)


@dataclass(frozen=True)
class Say:
    text: str
    thinking: str | None = None
    delay_s: float = 0.0  # held before the answer (a slow model, for cancellation and deadlines)


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Limit:
    """The service's usage-limit answer: 429 with its own error shape."""

    message: str
    retry_after_s: int | None = None


Turn = Say | Call | Limit


def say(text: str, thinking: str | None = None, delay_s: float = 0.0) -> Say:
    return Say(text, thinking, delay_s)


def call(name: str, **arguments: Any) -> Call:
    return Call(name, arguments)


def limit(message: str, retry_after_s: int | None = None) -> Limit:
    return Limit(message, retry_after_s)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ApiRoute:
    """One API's script and recordings."""

    name: str
    script: deque[Turn] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    main_requests: list[Recorded] = field(default_factory=list)
    tool_results: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def enqueue(self, *turns: Turn) -> None:
        self.script.extend(turns)

    def next_turn(self) -> Turn:
        return self.script.popleft() if self.script else Say("echo: (nothing scripted)")


class AgentUpstream:
    """The server. ``anthropic``, ``responses`` and ``gemini`` are the routes; ``url`` the base."""

    def __init__(self) -> None:
        self.anthropic = ApiRoute("anthropic")
        self.responses = ApiRoute("responses")
        self.gemini = ApiRoute("gemini")
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> AgentUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# -- the three dialects ------------------------------------------------------------------------------------


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> Iterator[bytes]:
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {json.dumps(data)}\n\n".encode()


def anthropic_events(turn: Say | Call, model: str) -> list[tuple[str | None, dict[str, Any]]]:
    message = {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 1, "cache_read_input_tokens": 0},
    }
    events: list[tuple[str | None, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if isinstance(turn, Say):
        if turn.thinking:
            blocks.append(
                (
                    {"type": "thinking", "thinking": "", "signature": ""},
                    {"type": "thinking_delta", "thinking": turn.thinking},
                )
            )
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": turn.text}))
        stop = "end_turn"
    else:
        start = {"type": "tool_use", "id": f"toolu_{next(_ids):08d}", "name": turn.name, "input": {}}
        blocks.append((start, {"type": "input_json_delta", "partial_json": json.dumps(turn.arguments)}))
        stop = "tool_use"
    for index, (start_block, delta) in enumerate(blocks):
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start_block})
        )
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        if start_block["type"] == "thinking":
            signature = {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": signature}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 17},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def responses_events(turn: Say | Call, model: str) -> list[tuple[str | None, dict[str, Any]]]:
    response_id = f"resp_{next(_ids)}"
    items: list[dict[str, Any]] = []
    if isinstance(turn, Say):
        if turn.thinking:
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{next(_ids)}",
                    "summary": [{"type": "summary_text", "text": turn.thinking}],
                }
            )
        items.append(
            {
                "type": "message",
                "id": f"msg_{next(_ids)}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    else:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{next(_ids)}",
                "call_id": f"call_{next(_ids)}",
                "name": turn.name,
                "arguments": json.dumps(turn.arguments),
                "status": "completed",
            }
        )
    shell = {"id": response_id, "object": "response", "model": model, "status": "in_progress", "output": []}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": shell})
    ]
    for index, item in enumerate(items):
        events.append(
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item})
        )
        if item["type"] == "message":
            delta = {
                "type": "response.output_text.delta",
                "output_index": index,
                "content_index": 0,
                "delta": turn.text,
            }  # type: ignore[union-attr]
            events.append(("response.output_text.delta", delta))
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item})
        )
    usage = {
        "input_tokens": 230,
        "input_tokens_details": {"cached_tokens": 30},
        "output_tokens": 19,
        "output_tokens_details": {"reasoning_tokens": 7},
        "total_tokens": 249,
    }
    done = {**shell, "status": "completed", "output": items, "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return events


def gemini_chunks(turn: Say | Call, model: str) -> list[tuple[str | None, dict[str, Any]]]:
    parts: list[dict[str, Any]] = []
    if isinstance(turn, Say):
        if turn.thinking:
            parts.append({"text": turn.thinking, "thought": True})
        parts.append({"text": turn.text})
    else:
        parts.append({"functionCall": {"name": turn.name, "args": turn.arguments}})
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 310, "candidatesTokenCount": 23, "totalTokenCount": 333},
        "modelVersion": model,
    }
    return [(None, chunk)]


# -- serving -----------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, upstream: AgentUpstream, *args: Any) -> None:
        self.upstream = upstream
        super().__init__(*args)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = urlsplit(self.path).path
        headers = {k.lower(): v for k, v in self.headers.items()}
        if path.startswith("/anthropic/"):
            self._anthropic(path, headers, body)
        elif path.startswith("/responses/"):
            self._responses(path, headers, body)
        elif path.startswith("/gemini/"):
            self._gemini(path, headers, body)
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    # Anthropic Messages
    def _anthropic(self, path: str, headers: dict[str, str], body: Any) -> None:
        route = self.upstream.anthropic
        record = Recorded(path, headers, body)
        route.requests.append(record)
        if headers.get("x-api-key") != API_KEY and headers.get("authorization") != f"Bearer {API_KEY}":
            route.refused.append("no key")
            self._json(
                401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
            )
            return
        if not path.endswith("/v1/messages") or not isinstance(body, dict):
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
            return
        model = str(body.get("model", "claude"))
        main = bool(body.get("tools"))
        if main:
            route.main_requests.append(record)
            route.tool_results.extend(_anthropic_tool_results(body))
        turn = route.next_turn() if main else Say("ok")
        if isinstance(turn, Limit):
            error = {"type": "error", "error": {"type": "rate_limit_error", "message": turn.message}}
            extra = {"retry-after": str(turn.retry_after_s)} if turn.retry_after_s else {}
            self._json(429, error, extra)
            return
        self._hold(turn)
        events = anthropic_events(turn, model)
        if body.get("stream"):
            self._stream(_sse(events))
        else:
            self._json(200, _anthropic_body(events))

    # The Responses API
    def _responses(self, path: str, headers: dict[str, str], body: Any) -> None:
        route = self.upstream.responses
        record = Recorded(path, headers, body)
        route.requests.append(record)
        if headers.get("authorization") != f"Bearer {API_KEY}":
            route.refused.append("no key")
            self._json(
                401, {"error": {"type": "invalid_request_error", "code": "invalid_api_key", "message": "bad key"}}
            )
            return
        if not path.endswith("/responses") or not isinstance(body, dict):
            self._json(404, {"error": {"message": path}})
            return
        # Codex sends no side requests: every request is the agent's own turn.
        route.main_requests.append(record)
        route.tool_results.extend(_responses_tool_results(body))
        turn = route.next_turn()
        if isinstance(turn, Limit):
            error = {"error": {"type": "usage_limit_reached", "message": turn.message}}
            if turn.retry_after_s:
                error["error"]["resets_in_seconds"] = turn.retry_after_s
            self._json(429, error)
            return
        self._hold(turn)
        self._stream(_sse(responses_events(turn, str(body.get("model", "gpt")))))

    # Gemini generateContent
    def _gemini(self, path: str, headers: dict[str, str], body: Any) -> None:
        route = self.upstream.gemini
        record = Recorded(path, headers, body)
        route.requests.append(record)
        if headers.get("x-goog-api-key") != API_KEY:
            route.refused.append("no key")
            error = {"code": 401, "message": "API key not valid.", "status": "UNAUTHENTICATED"}
            self._json(401, {"error": error})
            return
        if ":" not in path or not isinstance(body, dict):
            self._json(404, {"error": {"code": 404, "message": path, "status": "NOT_FOUND"}})
            return
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        main = bool(body.get("tools"))
        if main:
            route.main_requests.append(record)
            route.tool_results.extend(_gemini_tool_results(body))
        turn = route.next_turn() if main else Say('{"reasoning": "simple", "model_choice": "flash"}')
        if isinstance(turn, Limit):
            # A daily quota, as the service words it: Gemini CLI takes it as final and retries nothing.
            quota = {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "quotaMetric": "requests"}
            details: list[dict[str, Any]] = [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [quota]}
            ]
            if turn.retry_after_s:
                delay = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{turn.retry_after_s}s"}
                details.append(delay)
            error = {"code": 429, "message": turn.message, "status": "RESOURCE_EXHAUSTED", "details": details}
            self._json(429, {"error": error})
            return
        self._hold(turn)
        chunks = gemini_chunks(turn, model)
        if path.endswith(":streamGenerateContent"):
            self._stream(_sse(chunks))
        else:
            self._json(200, chunks[-1][1])

    def _hold(self, turn: Turn) -> None:
        if isinstance(turn, Say) and turn.delay_s:
            time.sleep(turn.delay_s)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, frames: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for frame in frames:
                self.wfile.write(frame)
                self.wfile.flush()
        except OSError:
            pass


def _anthropic_body(events: list[tuple[str | None, dict[str, Any]]]) -> dict[str, Any]:
    message = dict(events[0][1]["message"])
    content = []
    for _, data in events:
        if data["type"] == "content_block_start":
            content.append(dict(data["content_block"]))
        elif data["type"] == "content_block_delta":
            delta = data["delta"]
            block = content[data["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                block["input"] = json.loads(delta["partial_json"])
        elif data["type"] == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
    message["content"] = content
    return message


def _anthropic_tool_results(body: dict[str, Any]) -> list[str]:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    out = []
    for block in last.get("content") or [] if isinstance(last.get("content"), list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block.get("content")
            if isinstance(content, list):
                content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
            out.append(str(content))
    return out


def _responses_tool_results(body: dict[str, Any]) -> list[str]:
    items = body.get("input") or []
    results = []
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            results.append(output if isinstance(output, str) else json.dumps(output))
        elif item.get("type") == "message" and item.get("role") == "user":
            break
    return list(reversed(results))


def _gemini_tool_results(body: dict[str, Any]) -> list[str]:
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    return [
        json.dumps(part["functionResponse"].get("response"))
        for part in last.get("parts") or []
        if isinstance(part, dict) and "functionResponse" in part
    ]
