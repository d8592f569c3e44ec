"""What every stream assembler shares: the protocol the transport feeds, the errors a stream can end
with, and the life cycle (progress counters, terminal event, feed-after-finish).

The transport feeds every event of a streamed answer to an assembler and hands ``result()`` to the
decoder that reads non-streamed bodies, so streamed and non-streamed answers share one mapping
(DESIGN principle 8). Memory stays flat in stream length apart from the content itself: raw events
are never kept, and each growing string is a list of fragments joined once in ``result()``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, Protocol


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


def as_object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_text(value: object) -> str:
    return value if isinstance(value, str) else ""


def load_json(data: str) -> dict[str, Any]:
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise StreamProtocolError(f"stream data is not JSON ({exc}): {data[:80]!r}") from exc
    if not isinstance(payload, dict):
        raise StreamProtocolError(f"stream data is a JSON {type(payload).__name__}, not an object")
    return payload


def error_event(payload: dict[str, Any]) -> StreamErrorEvent:
    error = payload.get("error")
    if isinstance(error, dict):
        return StreamErrorEvent(as_text(error.get("type")) or None, as_text(error.get("message")) or str(error))
    return StreamErrorEvent(None, str(error))


class Fragments:
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


class BaseAssembler(ABC):
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

    def _add(self, fragments: Fragments, piece: object, label: str) -> str | None:
        """Add ``piece`` to a growing string; ``label`` when it is the string's first content (a block
        starts: a progress message), else None."""
        first = not fragments
        chars = fragments.add(piece)
        self._grew(chars)
        return label if chars and first else None

    @abstractmethod
    def _feed(self, event: str, data: str) -> str | None: ...

    @abstractmethod
    def _received(self) -> str:
        """What had arrived before the stream was cut, for the StreamCutError message."""

    @abstractmethod
    def _body(self) -> dict[str, Any]: ...
