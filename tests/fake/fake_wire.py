"""Test helpers for the fake's own tests: each route's URLs and keys, and readers that put a streamed
answer back together the way a client would (so a test can compare it with the body it came from)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import httpx
from fake_upstream import FakeUpstream
from httpx_sse import ServerSentEvent, connect_sse

OPENAI_WIRE = (
    "kimi", "openai", "mistral", "openrouter", "groq", "together", "fireworks", "siliconflow", "deepseek", "vllm",
    "lmstudio", "custom",
)  # fmt: skip
ANTHROPIC_WIRE = ("anthropic", "kimi-anthropic")
ALL_ROUTES = (*OPENAI_WIRE, *ANTHROPIC_WIRE, "gemini", "cohere", "ollama")
KEYLESS = ("vllm", "lmstudio", "custom", "ollama")
CHAT_PATHS = {"gemini": "/models/{model}:generateContent", "cohere": "/v2/chat", "ollama": "/api/chat"}
MODEL_PATHS = {"gemini": "/models", "cohere": "/v1/models", "ollama": "/api/tags"}
GOOD_MODELS = {
    "kimi": "kimi-k2-0905-preview",
    "openai": "gpt-4.1",
    "mistral": "mistral-small-latest",
    "openrouter": "openai/gpt-5.5",
    "gemini": "gemini-3.5-flash",
    "cohere": "command-a-03-2025",
    "ollama": "llama3.2",
}


def headers_for(route: str) -> dict[str, str]:
    """The credentials each service wants."""
    if route in ANTHROPIC_WIRE:
        return {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
    if route == "gemini":
        return {"x-goog-api-key": "g-test"}
    return {} if route == "ollama" else {"Authorization": "Bearer sk-test"}


def chat_url(fake: FakeUpstream, route: str, *, model: str = "gemini-3.5-flash", stream: bool = False) -> str:
    if route == "gemini":
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"{fake.base_url(route)}/models/{model}:{method}"
    path = "/v1/messages" if route in ANTHROPIC_WIRE else CHAT_PATHS.get(route, "/chat/completions")
    return fake.base_url(route) + path


def models_url(fake: FakeUpstream, route: str) -> str:
    path = "/v1/models" if route in ANTHROPIC_WIRE else MODEL_PATHS.get(route, "/models")
    return fake.base_url(route) + path


def simple_body(route: str, text: str = "hi", **fields: Any) -> dict[str, Any]:
    """The smallest request each service accepts (Ollama's with the ``num_ctx`` it should get)."""
    if route == "gemini":
        return {"contents": [{"role": "user", "parts": [{"text": text}]}], **fields}
    body: dict[str, Any] = {
        "model": GOOD_MODELS.get(route, "some-model"),
        "messages": [{"role": "user", "content": text}],
    }
    if route in ANTHROPIC_WIRE:
        body["max_tokens"] = 64
    if route == "ollama":
        body["options"] = {"num_ctx": 8192}
    return body | fields


def post(client: httpx.Client, fake: FakeUpstream, route: str, body: Any, **kwargs: Any) -> httpx.Response:
    return client.post(chat_url(fake, route, **kwargs), json=body, headers=headers_for(route))


def sse(client: httpx.Client, fake: FakeUpstream, route: str, body: Any, **kwargs: Any) -> list[ServerSentEvent]:
    """The SSE events of a streamed answer (asserting it is one)."""
    url = chat_url(fake, route, stream=True, **kwargs)
    with connect_sse(client, "POST", url, json=body, headers=headers_for(route)) as source:
        assert source.response.status_code == 200, source.response.read()
        assert source.response.headers["content-type"] == "text/event-stream"
        return list(source.iter_sse())


# ---------------------------------------------------------------------------------------------------------
# Readers: a stream back into the parts of the body it was generated from


def read_openai_stream(events: Iterable[str]) -> dict[str, Any]:
    """Content, reasoning (per field), tool calls (first id/name kept, arguments joined), finish, usage."""
    out: dict[str, Any] = {"content": "", "thinking": "", "reasoning": {}, "calls": {}, "finish": None, "usage": None}
    payloads = list(events)
    assert payloads[-1] == "[DONE]"
    for chunk in map(json.loads, payloads[:-1]):
        out["usage"] = chunk.get("usage") or (chunk.get("x_groq") or {}).get("usage") or out["usage"]
        for choice in chunk["choices"]:
            delta = choice["delta"]
            out["finish"] = choice["finish_reason"] or out["finish"]
            for field in ("reasoning_content", "reasoning"):
                if field in delta:
                    out["reasoning"][field] = out["reasoning"].get(field, "") + delta[field]
            content = delta.get("content")
            if isinstance(content, list):  # Mistral's thinking chunks
                out["thinking"] += "".join(t["text"] for part in content for t in part["thinking"])
            elif content:
                out["content"] += content
            for part in delta.get("tool_calls") or []:
                call = out["calls"].setdefault(part["index"], {"id": part.get("id"), "name": None, "arguments": ""})
                call["name"] = call["name"] or part["function"].get("name")
                call["arguments"] += part["function"].get("arguments", "")
    out["calls"] = [out["calls"][index] for index in sorted(out["calls"])]
    return out


def read_anthropic_stream(events: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The message rebuilt from its events: content blocks, stop reason, usage."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for name, data in events:
        event = json.loads(data)
        assert event["type"] == name
        if name == "message_start":
            message = event["message"]
        elif name == "content_block_start":
            message["content"].append(dict(event["content_block"]))
        elif name == "content_block_delta":
            block, delta = message["content"][event["index"]], event["delta"]
            if delta["type"] == "input_json_delta":
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
            else:
                key = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}[
                    delta["type"]
                ]
                block[key] = block.get(key, "") + delta[key]
        elif name == "message_delta":
            message.update(event["delta"])
            message["usage"] = message["usage"] | event["usage"]
    for index, text in partial.items():
        message["content"][index]["input"] = json.loads(text)
    return message


def read_gemini_stream(events: Iterable[str]) -> dict[str, Any]:
    """Parts (consecutive text pieces of the same kind merged), the finish reason, the last usage seen."""
    parts: list[dict[str, Any]] = []
    finish, usage = None, None
    for event in map(json.loads, events):
        usage = event.get("usageMetadata", usage)
        for candidate in event.get("candidates", []):
            finish = candidate.get("finishReason", finish)
            for part in candidate["content"]["parts"]:
                last = parts[-1] if parts else None
                mergeable = last is not None and "text" in part and "text" in last and "thoughtSignature" not in last
                if mergeable and last is not None and last.get("thought") == part.get("thought"):
                    last["text"] += part["text"]
                    last |= {k: v for k, v in part.items() if k == "thoughtSignature"}
                else:
                    parts.append(dict(part))
    return {"parts": parts, "finish": finish, "usage": usage}


def read_cohere_stream(events: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The v2 message rebuilt from its named events, with finish reason and usage."""
    message: dict[str, Any] = {}
    finish, usage = None, None
    for name, data in events:
        event = json.loads(data)
        assert event["type"] == name
        delta = event.get("delta", {}).get("message", {})
        if name == "message-start":
            message = {"role": delta["role"], "content": [], "tool_plan": "", "tool_calls": []}
        elif name == "content-start":
            message["content"].append(dict(delta["content"]))
        elif name == "content-delta":
            item = message["content"][event["index"]]
            for key, piece in delta["content"].items():
                item[key] += piece
        elif name == "tool-plan-delta":
            message["tool_plan"] += delta["tool_plan"]
        elif name == "tool-call-start":
            assert isinstance(delta["tool_calls"], dict)  # one object, not a list
            message["tool_calls"].append(json.loads(json.dumps(delta["tool_calls"])))
        elif name == "tool-call-delta":
            message["tool_calls"][event["index"]]["function"]["arguments"] += delta["tool_calls"]["function"][
                "arguments"
            ]
        elif name == "message-end":
            finish, usage = event["delta"]["finish_reason"], event["delta"]["usage"]
    return {"message": message, "finish": finish, "usage": usage}


def read_ollama_lines(lines: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Content, thinking, tool calls and the final line's counts and reason of an NDJSON answer."""
    out: dict[str, Any] = {"content": "", "thinking": "", "tool_calls": [], "final": None}
    for line in lines:
        assert out["final"] is None, "a line after done: true"
        message = line["message"]
        out["content"] += message.get("content", "")
        out["thinking"] += message.get("thinking", "")
        out["tool_calls"] += message.get("tool_calls", [])
        if line["done"]:
            out["final"] = line
    return out
