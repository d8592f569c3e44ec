"""OpenAI chat-completion chunks (every OpenAI-compatible host) → one ``chat.completion`` body.

Tolerates the streaming quirks of the OpenAI-compatible hosts (docs/providers.md, Host rules): reasoning as
``reasoning_content`` or ``reasoning``, Mistral's list-of-chunks ``content``, Groq's ``x_groq.usage``,
an ``id`` of ``"null"``, deltas without ``index``, and OpenRouter's ``finish_reason: "error"``.
"""

from __future__ import annotations

from typing import Any

from colibri_router.toolcalls.assembly.base import (
    BaseAssembler,
    Fragments,
    StreamErrorEvent,
    as_object,
    as_text,
    error_event,
    load_json,
)

# The keys of a delta that carries nothing but text (the first chunk also names the role).
_TEXT_DELTA_KEYS = frozenset({"role", "content"})


def _call_id(value: object) -> str:
    """Mistral's SDK default id is the literal ``"null"``: it counts as no id at all."""
    text = as_text(value)
    return "" if text == "null" else text


class _ToolCallParts:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments = Fragments()

    def take(self, fragment: dict[str, Any]) -> int:
        function = as_object(fragment.get("function"))
        # id and name are taken once: some servers repeat the name in every chunk, and Kimi Code sends
        # a fresh id on every fragment of the same call. Only the arguments are concatenated.
        self.id = self.id or _call_id(fragment.get("id"))
        self.name = self.name or as_text(function.get("name"))
        return self.arguments.add(function.get("arguments"))

    def to_dict(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments.joined()}
        return {"id": self.id, "type": "function", "function": function}


class OpenAIStreamAssembler(BaseAssembler):
    """``chat.completion.chunk`` payloads → a ``chat.completion`` body. ``data: [DONE]`` ends the stream."""

    def __init__(self) -> None:
        super().__init__()
        self._chunks = 0
        self._id: str | None = None
        self._model: str | None = None
        self._text = Fragments()
        self._reasoning = Fragments()
        self._refusal = Fragments()  # OpenAI's `refusal` deltas, instead of content, when it declines
        self._calls: dict[int, _ToolCallParts] = {}
        self._open_index: int | None = None
        self._next_index = 0
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    def _feed(self, event: str, data: str) -> str | None:
        if data == "[DONE]" or data.strip() == "[DONE]":
            self._complete = self._closed = True
            return None
        chunk = load_json(data)
        if chunk.get("error") is not None:
            raise error_event(chunk)
        self._chunks += 1
        if self._id is None:
            self._id = as_text(chunk.get("id")) or None
        if self._model is None:
            self._model = as_text(chunk.get("model")) or None
        # Usage comes in the last chunk: at the top level, under Groq's x_groq (historically), or
        # (some hosts) inside choices[0].
        if "usage" in chunk:
            self._take_usage(chunk)
        if "x_groq" in chunk:
            self._take_usage(as_object(chunk["x_groq"]))
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return None  # a usage-only chunk (stream_options.include_usage) is normal
        return self._feed_choice(as_object(choices[0]))

    def _take_usage(self, holder: dict[str, Any]) -> None:
        usage = holder.get("usage")
        if isinstance(usage, dict):
            self._usage = usage

    def _feed_choice(self, choice: dict[str, Any]) -> str | None:
        if "usage" in choice:
            self._take_usage(choice)
        finish_reason = as_text(choice.get("finish_reason"))
        if finish_reason == "error":
            # OpenRouter: a failure after the first byte is a 200 stream ending this way, never a success.
            raise StreamErrorEvent(None, "the upstream ended the stream with finish_reason 'error'")
        if finish_reason:
            # Some servers close without [DONE]: the content is complete once finish_reason arrives.
            self._finish_reason = finish_reason
            self._complete = True
        delta = as_object(choice.get("delta"))
        content = delta.get("content")
        if isinstance(content, str) and delta.keys() <= _TEXT_DELTA_KEYS:
            return self._add(self._text, content, "text")  # most chunks: a piece of the answer, nothing else
        # Thinking models stream reasoning before content, named reasoning_content or reasoning by host.
        label = self._add(self._reasoning, delta.get("reasoning_content"), "thinking")
        label = self._add(self._reasoning, delta.get("reasoning"), "thinking") or label
        label = self._add(self._refusal, delta.get("refusal"), "text") or label
        if isinstance(content, list):
            label = self._feed_content_chunks(content) or label
        else:
            label = self._add(self._text, content, "text") or label
        tool_calls = delta.get("tool_calls")
        for fragment in tool_calls if isinstance(tool_calls, list) else ():
            label = self._feed_tool_call(as_object(fragment)) or label
        return label

    def _feed_content_chunks(self, chunks: list[Any]) -> str | None:
        """Mistral reasoning models: ``[{"type": "thinking", "thinking": [{"type": "text", ...}]}]`` while
        thinking, then text chunks (a transition event may hold both)."""
        label = None
        for raw in chunks:
            chunk = as_object(raw)
            if chunk.get("type") == "thinking":
                thinking = chunk.get("thinking")
                for inner in thinking if isinstance(thinking, list) else ():
                    label = self._add(self._reasoning, as_object(inner).get("text"), "thinking") or label
            else:
                label = self._add(self._text, chunk.get("text"), "text") or label
        return label

    def _feed_tool_call(self, fragment: dict[str, Any]) -> str | None:
        index = self._index_of(fragment)
        call = self._calls.get(index)
        first = call is None
        if call is None:
            call = self._calls[index] = _ToolCallParts()
            self._next_index = max(self._next_index, index + 1)
            self._started = True
        self._open_index = index
        self._grew(call.take(fragment))
        return f"tool_call {call.name}" if first else None

    def _index_of(self, fragment: dict[str, Any]) -> int:
        index = fragment.get("index")
        if isinstance(index, int):
            return index
        # Databricks-hosted Kimi omits `index`: a fragment continues the open call unless it opens a
        # new one, which it shows by carrying a different id together with a function name.
        if self._open_index is None:
            return self._next_index
        call_id = _call_id(fragment.get("id"))
        name = as_text(as_object(fragment.get("function")).get("name"))
        if call_id and name and call_id != self._calls[self._open_index].id:
            return self._next_index
        return self._open_index

    def _received(self) -> str:
        return (
            f"{self._chunks} chunks received but neither [DONE] nor a finish_reason "
            f"({self._chars} output chars, {len(self._calls)} tool calls)"
        )

    def _body(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self._text.joined() or None}
        if self._reasoning:
            message["reasoning_content"] = self._reasoning.joined()
        if self._refusal:
            message["refusal"] = self._refusal.joined()
        if self._calls:
            message["tool_calls"] = [self._calls[index].to_dict() for index in sorted(self._calls)]
        # Kimi sometimes leaves finish_reason null on a tool-call turn.
        finish_reason = self._finish_reason or ("tool_calls" if self._calls else None)
        choice = {"index": 0, "message": message, "finish_reason": finish_reason}
        body: dict[str, Any] = {"id": self._id, "object": "chat.completion", "model": self._model}
        body["choices"] = [choice]
        if self._usage is not None:
            body["usage"] = self._usage
        return body
