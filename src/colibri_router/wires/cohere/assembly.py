"""Cohere v2 chat stream events → one v2 chat response body.

The stream is SSE with real event names (https://docs.cohere.com/reference/chat-stream): ``message-start``,
then content blocks (``content-start``/``-delta``/``-end``, text or thinking, by ``index``), the ``tool_plan``
in ``tool-plan-delta`` events, tool calls (``tool-call-start`` whose ``tool_calls`` is ONE object, then
argument fragments in ``tool-call-delta``, by their own ``index``), and ``message-end`` with the finish reason
and usage, which ends it. Citation and debug events carry nothing the router keeps.
"""

from __future__ import annotations

from typing import Any

from colibri_router.toolcalls.assembly.base import (
    BaseAssembler,
    Fragments,
    StreamErrorEvent,
    as_object,
    as_text,
    load_json,
)

# httpx-sse names an event without an `event:` line "message"; the payload's `type` says the same.
_UNNAMED = frozenset({"", "message"})
_CONTENT_KINDS = ("text", "thinking")


class _Content:
    __slots__ = ("kind", "value")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.value = Fragments()

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, self.kind: self.value.joined()}


class _ToolCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, start: dict[str, Any]) -> None:
        self.id = as_text(start.get("id"))
        self.name = as_text(as_object(start.get("function")).get("name"))
        self.arguments = Fragments()

    def to_dict(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments.joined()}
        return {"id": self.id, "type": "function", "function": function}


def _index(payload: dict[str, Any]) -> int:
    index = payload.get("index")
    return index if isinstance(index, int) else 0


def _delta_message(payload: dict[str, Any]) -> dict[str, Any]:
    return as_object(as_object(payload.get("delta")).get("message"))


def _one_call(value: object) -> dict[str, Any]:
    """Cohere sends ``tool_calls`` as one object per event; a list (seen in ported clients) is read too."""
    if isinstance(value, list):
        return as_object(value[0]) if value else {}
    return as_object(value)


class CohereStreamAssembler(BaseAssembler):
    """v2 chat stream events → a v2 chat response body. ``message-end`` ends the stream."""

    def __init__(self) -> None:
        super().__init__()
        self._events = 0
        self._id: str | None = None
        self._contents: dict[int, _Content] = {}
        self._tool_plan = Fragments()
        self._calls: dict[int, _ToolCall] = {}
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    def _feed(self, event: str, data: str) -> str | None:
        if data.strip() == "[DONE]":
            return None  # a sentinel some proxies (and the SDK's reader) allow after message-end
        payload = load_json(data)
        self._events += 1
        kind = as_text(payload.get("type")) if event in _UNNAMED else event
        match kind:
            case "message-start":
                self._id = as_text(payload.get("id")) or self._id
            case "content-start":
                start = as_object(_delta_message(payload).get("content"))
                return self._add_content(_index(payload), start, as_text(start.get("type")) or "text")
            case "content-delta":
                delta = as_object(_delta_message(payload).get("content"))
                kind_of_delta = "thinking" if "thinking" in delta else "text"
                return self._add_content(_index(payload), delta, kind_of_delta)
            case "tool-plan-delta":
                return self._add(self._tool_plan, _delta_message(payload).get("tool_plan"), "thinking")
            case "tool-call-start":
                call = _ToolCall(_one_call(_delta_message(payload).get("tool_calls")))
                self._calls[_index(payload)] = call
                self._started = True
                return f"tool_call {call.name}"
            case "tool-call-delta":
                self._add_arguments(payload)
            case "message-end":
                self._end(as_object(payload.get("delta")))
        # content-end, tool-call-end, citation-*, debug and unknown events carry nothing to keep.
        return None

    def _add_content(self, index: int, piece: dict[str, Any], kind: str) -> str | None:
        content = self._contents.get(index)
        if content is None:
            content = self._contents[index] = _Content(kind if kind in _CONTENT_KINDS else "text")
        return self._add(content.value, piece.get(content.kind), content.kind)

    def _add_arguments(self, payload: dict[str, Any]) -> None:
        index = _index(payload)
        call = self._calls.get(index)
        if call is None:  # a delta without its start: the call is known only by its arguments
            call = self._calls[index] = _ToolCall({})
        function = as_object(_one_call(_delta_message(payload).get("tool_calls")).get("function"))
        self._grew(call.arguments.add(function.get("arguments")))

    def _end(self, delta: dict[str, Any]) -> None:
        self._finish_reason = as_text(delta.get("finish_reason")) or None
        error = delta.get("error")
        if self._finish_reason == "ERROR" or error:
            detail = as_text(error) or (str(error) if error else "the generation failed (finish_reason ERROR)")
            raise StreamErrorEvent("ERROR", detail)
        usage = delta.get("usage")
        if isinstance(usage, dict):
            self._usage = usage
        self._complete = True

    def _received(self) -> str:
        return (
            f"{self._events} events received but no message-end "
            f"({self._chars} output chars, {len(self._calls)} tool calls)"
        )

    def _body(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        message["content"] = [self._contents[index].to_dict() for index in sorted(self._contents)]
        if self._tool_plan:
            message["tool_plan"] = self._tool_plan.joined()
        if self._calls:
            message["tool_calls"] = [self._calls[index].to_dict() for index in sorted(self._calls)]
        body: dict[str, Any] = {"id": self._id, "finish_reason": self._finish_reason, "message": message}
        if self._usage is not None:
            body["usage"] = self._usage
        return body
