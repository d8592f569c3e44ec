"""Stream assemblers: the SSE events of one streamed answer in, the provider's non-streamed body out.

The transport feeds every event to an assembler and hands ``result()`` to the decoder that reads
non-streamed bodies, so streamed and non-streamed answers share one mapping (DESIGN principle 8).
Two wire styles exist: OpenAI chat-completion chunks (Kimi and every OpenAI-compatible host) and
Anthropic Messages events (Claude, and Kimi's Anthropic-compatible endpoint). Each tolerates the
streaming quirks listed in KIMI-FACTS.md.

Memory stays flat in stream length apart from the content itself: raw events are never kept, and
each growing string is a list of fragments joined once in ``result()``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol

from colibri_router.toolcalls.arguments import parse_arguments


class StreamProtocolError(Exception):
    """The stream is unusable: a data payload that is not a JSON object, a delta for a block that never
    started, or an assembler fed after its stream finished."""


class StreamCutError(StreamProtocolError):
    """The stream ended before its terminal event; the message says what had been received."""


class StreamErrorEvent(Exception):
    """The provider reported an error inside the stream: an Anthropic ``error`` event or an
    OpenAI-style ``{"error": {...}}`` chunk."""

    def __init__(self, error_type: str | None, message: str) -> None:
        super().__init__(f"{error_type}: {message}" if error_type else message)
        self.error_type = error_type
        self.message = message


class StreamAssembler(Protocol):
    def feed(self, event: str, data: str) -> str | None:
        """Take one SSE event; return ``"text"``, ``"thinking"`` or ``"tool_call <name>"`` when that
        starts (for progress messages), else None."""
        ...

    @property
    def output_chars(self) -> int:
        """Characters of text, thinking and tool arguments so far (about four per token)."""
        ...

    @property
    def started(self) -> bool:
        """True once content arrived: the time to first token."""
        ...

    def result(self) -> dict[str, Any]:
        """The body a non-streamed call would have returned; StreamCutError before the terminal event."""
        ...


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _load(data: str) -> dict[str, Any]:
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise StreamProtocolError(f"stream data is not JSON ({exc}): {data[:80]!r}") from exc
    if not isinstance(payload, dict):
        raise StreamProtocolError(f"stream data is a JSON {type(payload).__name__}, not an object")
    return payload


def _error_event(payload: dict[str, Any]) -> StreamErrorEvent:
    error = payload.get("error")
    if isinstance(error, dict):
        return StreamErrorEvent(_text(error.get("type")) or None, _text(error.get("message")) or str(error))
    return StreamErrorEvent(None, str(error))


class _Fragments:
    """One growing string, kept as blocks: ``+=`` per delta would copy the prefix again on every
    event, and one list item per delta costs ~60 bytes of object per few characters. Pieces are
    gathered in a short list and folded into a block every ``_FOLD`` pieces, so memory stays near the
    content's size and each character is copied a constant number of times. Empty pieces are
    dropped, so a bare ``""`` delta never counts as content."""

    __slots__ = ("_blocks", "_pending")
    _FOLD = 64

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._pending: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._blocks or self._pending)

    def add(self, piece: object) -> int:
        """Keep ``piece`` if it is a non-empty string (``null`` counts as empty); return its length."""
        if not isinstance(piece, str) or not piece:
            return 0
        self._pending.append(piece)
        if len(self._pending) >= self._FOLD:
            self._blocks.append("".join(self._pending))
            self._pending.clear()
        return len(piece)

    def joined(self) -> str:
        return "".join(self._blocks) + "".join(self._pending)


class _Assembler(ABC):
    """The life cycle both wire styles share: progress counters, terminal event, feed-after-finish."""

    def __init__(self) -> None:
        self._chars = 0
        self._started = False
        self._complete = False  # the terminal event arrived: result() may answer
        self._closed = False  # nothing more may be fed: end of stream seen or result() returned

    @property
    def output_chars(self) -> int:
        return self._chars

    @property
    def started(self) -> bool:
        return self._started

    def feed(self, event: str, data: str) -> str | None:
        if self._closed:
            raise StreamProtocolError(f"{type(self).__name__} was fed after its stream finished")
        if not data.strip():
            return None  # an event without data (keep-alive) carries nothing
        return self._feed(event, data)

    def result(self) -> dict[str, Any]:
        if not self._complete:
            raise StreamCutError(f"stream was cut: {self._received()}")
        self._closed = True
        return self._body()

    def _grew(self, chars: int) -> None:
        self._chars += chars
        self._started = self._started or chars > 0

    @abstractmethod
    def _feed(self, event: str, data: str) -> str | None: ...

    @abstractmethod
    def _received(self) -> str:
        """What had arrived before the stream was cut, for the StreamCutError message."""

    @abstractmethod
    def _body(self) -> dict[str, Any]: ...


# --- OpenAI-style chat-completion chunks -------------------------------------------------------------


class _ToolCallParts:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments = _Fragments()

    def take(self, fragment: dict[str, Any]) -> int:
        function = _object(fragment.get("function"))
        # id and name are taken once: some servers repeat the name in every chunk, and Kimi Code sends
        # a fresh id on every fragment of the same call. Only the arguments are concatenated.
        self.id = self.id or _text(fragment.get("id"))
        self.name = self.name or _text(function.get("name"))
        return self.arguments.add(function.get("arguments"))

    def to_dict(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments.joined()}
        return {"id": self.id, "type": "function", "function": function}


class OpenAIStreamAssembler(_Assembler):
    """``chat.completion.chunk`` payloads → a ``chat.completion`` body. ``data: [DONE]`` ends the stream."""

    def __init__(self) -> None:
        super().__init__()
        self._chunks = 0
        self._id: str | None = None
        self._model: str | None = None
        self._text = _Fragments()
        self._reasoning = _Fragments()
        self._calls: dict[int, _ToolCallParts] = {}
        self._open_index: int | None = None
        self._next_index = 0
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    def _feed(self, event: str, data: str) -> str | None:
        if data.strip() == "[DONE]":
            self._complete = self._closed = True
            return None
        chunk = _load(data)
        if chunk.get("error") is not None:
            raise _error_event(chunk)
        self._chunks += 1
        self._id = self._id or _text(chunk.get("id")) or None
        self._model = self._model or _text(chunk.get("model")) or None
        self._take_usage(chunk)
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return None  # a usage-only chunk (stream_options.include_usage) is normal
        return self._feed_choice(_object(choices[0]))

    def _take_usage(self, holder: dict[str, Any]) -> None:
        # Usage comes in the last chunk, at the top level or (some hosts) inside choices[0].
        usage = holder.get("usage")
        if isinstance(usage, dict):
            self._usage = usage

    def _feed_choice(self, choice: dict[str, Any]) -> str | None:
        self._take_usage(choice)
        finish_reason = _text(choice.get("finish_reason"))
        if finish_reason:
            # Some servers close without [DONE]: the content is complete once finish_reason arrives.
            self._finish_reason = finish_reason
            self._complete = True
        delta = _object(choice.get("delta"))
        # Thinking models stream reasoning_content before content.
        label = self._add(self._reasoning, delta.get("reasoning_content"), "thinking")
        label = self._add(self._text, delta.get("content"), "text") or label
        tool_calls = delta.get("tool_calls")
        for fragment in tool_calls if isinstance(tool_calls, list) else ():
            label = self._feed_tool_call(_object(fragment)) or label
        return label

    def _add(self, fragments: _Fragments, piece: object, label: str) -> str | None:
        first = not fragments
        chars = fragments.add(piece)
        self._grew(chars)
        return label if chars and first else None

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
        call_id = _text(fragment.get("id"))
        name = _text(_object(fragment.get("function")).get("name"))
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


# --- Anthropic-style Messages events -----------------------------------------------------------------


def _index(payload: dict[str, Any]) -> int:
    index = payload.get("index")
    if not isinstance(index, int):
        raise StreamProtocolError(f"{payload.get('type', 'content block')} event without an integer index")
    return index


class _Field:
    """A string field of a content block that may arrive whole in ``content_block_start``, as deltas,
    or both. Kimi's Anthropic endpoint sends tool input in the start AND replays it as deltas
    (seeds/kimi-streaming-tool-args.md), so deltas win when any arrived and the two are never joined;
    every field follows that rule so a replay can never duplicate text either."""

    __slots__ = ("_deltas", "_start")

    def __init__(self, start: object) -> None:
        self._start = _text(start)
        self._deltas = _Fragments()

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
        self.name = _text(start.get("name"))
        self._id = _text(start.get("id"))
        self._start_input = _object(start.get("input"))
        self._partial_json = _Fragments()

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


class AnthropicStreamAssembler(_Assembler):
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
        payload = _load(data)
        self._events += 1
        kind = _text(payload.get("type")) if event in _UNNAMED else event
        match kind:
            case "message_start":
                self._start_message(_object(payload.get("message")))
            case "content_block_start":
                return self._start_block(payload)
            case "content_block_delta":
                self._apply_delta(payload)
            case "message_delta":
                self._apply_message_delta(payload)
            case "message_stop":
                self._complete = self._closed = True
            case "error":
                raise _error_event(payload)
        # ping, content_block_stop and unknown events (forward compatibility) carry nothing to keep.
        return None

    def _start_message(self, message: dict[str, Any]) -> None:
        self._id = _text(message.get("id")) or None
        self._model = _text(message.get("model")) or None
        self._usage = dict(_object(message.get("usage")))

    def _start_block(self, payload: dict[str, Any]) -> str | None:
        start = _object(payload.get("content_block"))
        kind = _text(start.get("type"))
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
        self._grew(block.apply(_object(payload.get("delta"))))

    def _apply_message_delta(self, payload: dict[str, Any]) -> None:
        delta = _object(payload.get("delta"))
        self._stop_reason = _text(delta.get("stop_reason")) or self._stop_reason
        self._stop_sequence = _text(delta.get("stop_sequence")) or self._stop_sequence
        # message_delta usage is cumulative: each field replaces the one from message_start (adding
        # would double count). Its fields are optional, and a null means "not reported", not zero.
        usage = _object(payload.get("usage"))
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
