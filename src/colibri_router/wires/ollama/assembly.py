"""Ollama ``/api/chat`` NDJSON lines → the one chat response a non-streamed call returns.

Each line is a whole JSON object (https://github.com/ollama/ollama/blob/main/docs/api/streaming.mdx):
``message.thinking`` and ``message.content`` in pieces, ``message.tool_calls`` whole (a call never spans
lines), and a last line with ``done: true``, ``done_reason`` and the token counts. A failure after the 200
arrives as a line ``{"error": "..."}`` (https://github.com/ollama/ollama/blob/main/docs/api/errors.mdx).
"""

from __future__ import annotations

import json
from typing import Any

from colibri_router.toolcalls.assembly.base import (
    BaseAssembler,
    Fragments,
    StreamErrorEvent,
    as_object,
    as_text,
    load_json,
)


class OllamaStreamAssembler(BaseAssembler):
    """NDJSON chat lines → a chat response body. The ``done: true`` line ends the stream."""

    def __init__(self) -> None:
        super().__init__()
        self._lines = 0
        self._model: str | None = None
        self._content = Fragments()
        self._thinking = Fragments()
        self._calls: list[dict[str, Any]] = []
        self._final: dict[str, Any] = {}

    def _feed(self, event: str, data: str) -> str | None:
        line = load_json(data)
        error = line.get("error")
        if error is not None:
            raise StreamErrorEvent(None, as_text(error) or str(error))
        self._lines += 1
        self._model = self._model or as_text(line.get("model")) or None
        message = as_object(line.get("message"))
        label = self._add(self._thinking, message.get("thinking"), "thinking")
        label = self._add(self._content, message.get("content"), "text") or label
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            label = self._add_call(as_object(call)) or label
        if line.get("done") is True:
            # done_reason and the counts (prompt_eval_count, eval_count, durations) live on this line.
            self._final = {key: value for key, value in line.items() if key != "message"}
            self._complete = True
        return label

    def _add_call(self, call: dict[str, Any]) -> str | None:
        if not call:
            return None
        self._calls.append(call)
        self._started = True
        function = as_object(call.get("function"))
        arguments = function.get("arguments")
        self._grew(len(arguments) if isinstance(arguments, str) else len(json.dumps(arguments, ensure_ascii=False)))
        return f"tool_call {as_text(function.get('name'))}"

    def _received(self) -> str:
        return (
            f"{self._lines} lines received but none with done: true "
            f"({self._chars} output chars, {len(self._calls)} tool calls)"
        )

    def _body(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self._content.joined()}
        if self._thinking:
            message["thinking"] = self._thinking.joined()
        if self._calls:
            message["tool_calls"] = list(self._calls)
        return {"model": self._model, **self._final, "message": message}
