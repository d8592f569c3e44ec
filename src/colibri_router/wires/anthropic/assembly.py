"""Anthropic Messages events (Claude, and Kimi's Anthropic-compatible endpoint) → one ``message`` body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from colibri_router.toolcalls.arguments import arguments_object, parse_arguments
from colibri_router.toolcalls.assembly.base import (
    BaseAssembler,
    Fragments,
    StreamProtocolError,
    as_object,
    as_text,
    error_event,
    load_json,
)


def _index(payload: dict[str, Any]) -> int:
    index = payload.get("index")
    if not isinstance(index, int):
        raise StreamProtocolError(f"{payload.get('type', 'content block')} event without an integer index")
    return index


class _Field:
    """A string field of a content block that may arrive whole in ``content_block_start``, as deltas,
    or both. Kimi's Anthropic endpoint sends tool input in the start AND replays it as deltas,
    so deltas win when any arrived and the two are never joined;
    every field follows that rule so a replay can never duplicate text either."""

    __slots__ = ("_deltas", "_start")

    def __init__(self, start: object) -> None:
        self._start = as_text(start)
        self._deltas = Fragments()

    def add(self, piece: object) -> int:
        return self._deltas.add(piece)

    def value(self) -> str:
        return self._deltas.joined() if self._deltas else self._start


class _Block(Protocol):
    def apply(self, delta: dict[str, Any]) -> int:
        """Take one ``content_block_delta`` delta; return the output chars it added."""
        ...

    def to_dict(self) -> dict[str, Any]: ...


class _TextBlock:
    def __init__(self, start: dict[str, Any]) -> None:
        self._text = _Field(start.get("text"))

    def apply(self, delta: dict[str, Any]) -> int:
        return self._text.add(delta.get("text")) if delta.get("type") == "text_delta" else 0

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self._text.value()}


class _ThinkingBlock:
    def __init__(self, start: dict[str, Any]) -> None:
        self._thinking = _Field(start.get("thinking"))
        self._signature = _Field(start.get("signature"))

    def apply(self, delta: dict[str, Any]) -> int:
        kind = delta.get("type")
        if kind == "thinking_delta":
            return self._thinking.add(delta.get("thinking"))
        if kind == "signature_delta":
            self._signature.add(delta.get("signature"))  # opaque, not output: not counted
        return 0

    def to_dict(self) -> dict[str, Any]:
        block = {"type": "thinking", "thinking": self._thinking.value()}
        if signature := self._signature.value():
            block["signature"] = signature
        return block


class _ToolUseBlock:
    def __init__(self, start: dict[str, Any]) -> None:
        self.name = as_text(start.get("name"))
        self._id = as_text(start.get("id"))
        self._start_input = arguments_object(start.get("input"))
        self._partial_json = Fragments()

    def apply(self, delta: dict[str, Any]) -> int:
        if delta.get("type") != "input_json_delta":
            return 0
        return self._partial_json.add(delta.get("partial_json"))

    def to_dict(self) -> dict[str, Any]:
        # The start input and the deltas are kept apart (see _Field): concatenating them gave Kimi's
        # `{...}{...}` arguments. Claude sends an empty `{}` start, so its deltas win as they should.
        deltas = self._partial_json
        tool_input = parse_arguments(deltas.joined()) if deltas else self._start_input
        return {"type": "tool_use", "id": self._id, "name": self.name, "input": tool_input}


class _PassthroughBlock:
    """``redacted_thinking`` (its opaque ``data`` comes whole in the start) and block types this code
    does not know yet: kept exactly as started."""

    def __init__(self, start: dict[str, Any]) -> None:
        self._start = start

    def apply(self, delta: dict[str, Any]) -> int:
        return 0

    def to_dict(self) -> dict[str, Any]:
        return self._start


_BLOCKS: dict[str, Callable[[dict[str, Any]], _Block]] = {
    "text": _TextBlock,
    "thinking": _ThinkingBlock,
    "tool_use": _ToolUseBlock,
}
_LABELS = {"text": "text", "thinking": "thinking", "redacted_thinking": "thinking"}
# httpx-sse names an event without an `event:` line "message"; a proxy that drops the names still
# sends the same name as the payload's `type`.
_UNNAMED = frozenset({"", "message"})


class AnthropicStreamAssembler(BaseAssembler):
    """Messages stream events → a ``message`` body. ``message_stop`` ends the stream."""

    def __init__(self) -> None:
        super().__init__()
        self._events = 0
        self._id: str | None = None
        self._model: str | None = None
        self._usage: dict[str, Any] = {}
        self._blocks: dict[int, _Block] = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None

    def _feed(self, event: str, data: str) -> str | None:
        payload = load_json(data)
        self._events += 1
        kind = as_text(payload.get("type")) if event in _UNNAMED else event
        match kind:
            case "message_start":
                self._start_message(as_object(payload.get("message")))
            case "content_block_start":
                return self._start_block(payload)
            case "content_block_delta":
                self._apply_delta(payload)
            case "message_delta":
                self._apply_message_delta(payload)
            case "message_stop":
                self._complete = self._closed = True
            case "error":
                raise error_event(payload)
        # ping, content_block_stop and unknown events (forward compatibility) carry nothing to keep.
        return None

    def _start_message(self, message: dict[str, Any]) -> None:
        self._id = as_text(message.get("id")) or None
        self._model = as_text(message.get("model")) or None
        self._usage = dict(as_object(message.get("usage")))

    def _start_block(self, payload: dict[str, Any]) -> str | None:
        start = as_object(payload.get("content_block"))
        kind = as_text(start.get("type"))
        block = _BLOCKS.get(kind, _PassthroughBlock)(start)
        self._blocks[_index(payload)] = block
        if isinstance(block, _ToolUseBlock):
            self._started = True
            return f"tool_call {block.name}"
        return _LABELS.get(kind)

    def _apply_delta(self, payload: dict[str, Any]) -> None:
        index = _index(payload)
        block = self._blocks.get(index)
        if block is None:
            raise StreamProtocolError(f"content_block_delta for block {index}, which never started")
        self._grew(block.apply(as_object(payload.get("delta"))))

    def _apply_message_delta(self, payload: dict[str, Any]) -> None:
        delta = as_object(payload.get("delta"))
        self._stop_reason = as_text(delta.get("stop_reason")) or self._stop_reason
        self._stop_sequence = as_text(delta.get("stop_sequence")) or self._stop_sequence
        # message_delta usage is cumulative: each field replaces the one from message_start (adding
        # would double count). Its fields are optional, and a null means "not reported", not zero.
        usage = as_object(payload.get("usage"))
        self._usage.update((key, value) for key, value in usage.items() if value is not None)

    def _received(self) -> str:
        return (
            f"{self._events} events received but no message_stop "
            f"({self._chars} output chars, {len(self._blocks)} content blocks)"
        )

    def _body(self) -> dict[str, Any]:
        return {
            "id": self._id,
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": [self._blocks[index].to_dict() for index in sorted(self._blocks)],
            "stop_reason": self._stop_reason,
            "stop_sequence": self._stop_sequence,
            "usage": dict(self._usage),
        }
