"""K2 marker text → tool calls.

Self-hosted or misconfigured Kimi K2 endpoints (no tool parser configured) return tool calls as
marker text inside ``content`` instead of structured ``tool_calls``::

    Let me check.
    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>
    <|tool_calls_section_end|>

:func:`parse_k2_markers` cuts such sections out of the text and returns the calls in them. Model
output is untrusted and may stop anywhere (``max_tokens``), so parsing is pure, tolerant and never
raises. Arguments stay raw text here: :func:`colibri_router.toolcalls.arguments.parse_arguments`
turns them into objects, keeping invalid JSON for diagnosis.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from colibri_router.toolcalls.ids import parse_k2_id

_CALL_BEGIN = "<|tool_call_begin|>"
_ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
_CALL_END = "<|tool_call_end|>"
_K2_PREFIX = "functions."

# A section opens with the plural marker, with the singular variant some deployments emit, or, when
# the section marker was dropped, directly with a call (zero-width, so the call stays in the body).
_SECTION_BEGIN = re.compile(r"<\|tool_calls?_section_begin\|>|(?=<\|tool_call_begin\|>)")
_SECTION_END = re.compile(r"<\|tool_calls?_section_end\|>")


@dataclass(frozen=True, slots=True)
class MarkerCall:
    """One call found in marker text: its ID as K2 wrote it, the tool name, the raw argument text."""

    id: str
    name: str
    arguments: str


def contains_k2_markers(text: str) -> bool:
    """Whether ``text`` holds a tool-call section; cheap enough to run on every response."""
    # The substring test rejects ordinary text without running the regex.
    return "<|tool_call" in text and _SECTION_BEGIN.search(text) is not None


def parse_k2_markers(text: str) -> tuple[str, tuple[MarkerCall, ...]]:
    """``text`` → (the text with every tool-call section removed, right-stripped; the calls in order).

    Text without markers comes back unchanged with no calls. A section without its end marker (output
    cut off) runs to the end of the text.
    """
    if not contains_k2_markers(text):
        return text, ()
    kept: list[str] = []
    calls: list[MarkerCall] = []
    rest = text
    while (begin := _SECTION_BEGIN.search(rest)) is not None:
        kept.append(rest[: begin.start()])
        end = _SECTION_END.search(rest, begin.end())
        calls.extend(_section_calls(rest[begin.end() : end.start() if end else len(rest)]))
        rest = rest[end.end() :] if end else ""
    kept.append(rest)
    return "".join(kept).rstrip(), tuple(calls)


def _section_calls(body: str) -> Iterator[MarkerCall]:
    # Whatever precedes the first call marker, or sits between calls, is whitespace or noise.
    for chunk in body.split(_CALL_BEGIN)[1:]:
        call = _parse_call(chunk)
        if call is not None:
            yield call


def _parse_call(chunk: str) -> MarkerCall | None:
    """``ID<|tool_call_argument_begin|>ARGS<|tool_call_end|>``; the end marker may be missing."""
    content, ended, _ = chunk.partition(_CALL_END)
    raw_id, has_arguments, arguments = content.partition(_ARGUMENT_BEGIN)
    call_id = raw_id.strip()
    # Cut off inside the ID: the ID, and so the tool name, may be truncated; calling the wrong tool
    # would be worse than reporting none.
    if not call_id or not (has_arguments or ended):
        return None
    return MarkerCall(id=call_id, name=_tool_name(call_id), arguments=arguments.strip())


def _tool_name(call_id: str) -> str:
    """Everything between the optional ``functions.`` prefix and the last ``:idx``, so dotted and
    hyphenated names survive (the official parser truncates them, vLLM keeps the last dotted part)."""
    parsed = parse_k2_id(call_id)
    return parsed[0] if parsed is not None else call_id.removeprefix(_K2_PREFIX)
