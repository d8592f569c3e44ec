"""ToolIdStrategy: neutral tool-call IDs for the host, and each wire's own IDs derived from them:
K2 IDs for Kimi models, Claude-safe IDs for the Anthropic wire, IDs of at most 40 characters for every
other OpenAI-wire host, and exactly 9 alphanumerics for Mistral models (docs/providers.md).

Why IDs are rewritten at all (Kimi K2's tool-call guidance:
https://github.com/MoonshotAI/Kimi-K2/blob/main/docs/tool_call_guidance.md):

* Kimi K2's chat template writes every tool-call ID back into the prompt verbatim, and the model
  imitates what it sees. It was trained on ``functions.{name}:{idx}`` with ``idx`` counting the calls
  of the whole conversation; IDs rewritten by a client (``functionsread0``, ``call_x``) make K2 stop
  calling tools or invent IDs such as ``functions_get_weather_1``. So every request to Kimi carries
  K2 IDs, whatever the history holds.
* Claude rejects any ``tool_use`` id outside ``^[a-zA-Z0-9_-]+$`` with a 400, so K2 IDs (dots,
  colons) can never reach it as they are.
* A conversation may move between Kimi and Claude at any turn. The host therefore only ever sees
  neutral IDs, valid for every provider (:func:`neutral_ids_for_new_calls`), and each request derives
  its provider's IDs from the history afresh (:func:`ids_for_kimi`, :func:`ids_for_claude`).

Nothing is remembered between calls: every function here is pure and deterministic, so the same
history always yields the same IDs and no mapping table can go stale.

A tool result names its call by ID. When IDs are rewritten, a result carries the new ID of the call it
answers: the most recent *earlier* call with the result's ID. Hosts that reset K2's counter per turn
repeat IDs across a conversation, so "most recent earlier" is the only binding that stays sound.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Literal, TypeAlias

from colibri_router.conversation import Message, Part, ToolCall, ToolResult
from colibri_router.errors import InvalidRequestError

# IDs the host sees: valid for every provider. Match with ``fullmatch``: ``$`` alone also matches
# before a trailing newline.
NEUTRAL_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

KimiIdMode: TypeAlias = Literal["renumber", "repair"]

_MAX_ID_LENGTH = 64
_OPENAI_MAX_ID_LENGTH = 40
_MISTRAL_ID_LENGTH = 9
_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_HASH_LENGTH = 8
_CLAUDE_SAFE_STEM_LENGTH = _MAX_ID_LENGTH - 1 - _HASH_LENGTH
_NOT_NEUTRAL_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_TOOL_PARTS = (ToolCall, ToolResult)  # the parts that carry an ID

# The name is everything between the optional ``functions.`` prefix and the LAST ``:idx``: MCP tool
# names carry dots and hyphens (``mcp.fs.read``, ``list-files``), which the official reference parser
# truncates or drops and vLLM cuts to the last dotted segment. The prefix is optional because
# Moonshot's platform returns ``search:0``. DOTALL: a name is whatever the tool is called. The index
# is ASCII digits of bounded length: ``\d`` would accept other scripts' digits, which :func:`k2_id`
# cannot write back, and a huge digit run would make ``int()`` raise.
_K2_ID = re.compile(r"(?:functions\.)?(.+):([0-9]{1,9})", re.DOTALL)


def parse_k2_id(raw: str) -> tuple[str, int] | None:
    """``functions.{name}:{idx}`` or ``{name}:{idx}`` → ``(name, idx)``; ``None`` for opaque IDs."""
    match = _K2_ID.fullmatch(raw.strip())
    if match is None:
        return None
    return match.group(1), int(match.group(2))


def k2_id(name: str, index: int) -> str:
    return f"functions.{name}:{index}"


def claude_safe_id(raw: str) -> str:
    """A Claude-valid ID for ``raw``: readable stem plus a hash, so distinct IDs stay distinct after
    sanitizing (``a.b`` and ``a:b`` both sanitize to ``a_b``). At most 64 characters."""
    # surrogatepass: an ID decoded from JSON may hold a lone surrogate, which strict UTF-8 refuses.
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LENGTH]
    return f"{_sanitized(raw)[:_CLAUDE_SAFE_STEM_LENGTH]}_{digest}"


def ids_for_kimi(messages: Sequence[Message], mode: KimiIdMode = "renumber") -> tuple[Message, ...]:
    """The conversation with K2 IDs on every tool call and result.

    ``renumber`` numbers all calls of the conversation from 0, which reproduces what a K2 host with a
    conversation-wide counter emitted. ``repair`` (KimiTransformer's ``repairOnMismatch``) keeps IDs
    that already are canonical K2 IDs of their call and gives the others fresh indices.
    """
    if _no_tool_parts(messages):
        return tuple(messages)
    calls = _tool_calls(messages)
    new_ids = _renumbered_k2_ids(calls) if mode == "renumber" else _repaired_k2_ids(calls)
    return _rebind(messages, new_ids)


def ids_for_claude(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The conversation with Claude-valid, unique IDs on every tool call and result; valid IDs are kept."""
    if _no_tool_parts(messages):
        return tuple(messages)
    preferred = [_claude_preferred_id(call.id) for call in _tool_calls(messages)]
    return _rebind(messages, _unique_ids(preferred, taken=()))


def ids_for_openai(messages: Sequence[Message]) -> tuple[Message, ...]:
    """IDs of at most 40 characters from ``[A-Za-z0-9_-]`` (OpenAI's limit on replayed call IDs; the
    strictest of the OpenAI-compatible hosts). Valid IDs are kept; longer or foreign ones are shortened
    with a hash, so distinct IDs stay distinct."""
    if _no_tool_parts(messages):
        return tuple(messages)
    preferred = [_short_safe_id(call.id, _OPENAI_MAX_ID_LENGTH) for call in _tool_calls(messages)]
    return _rebind(messages, _unique_ids(preferred, taken=(), max_length=_OPENAI_MAX_ID_LENGTH))


def ids_for_mistral(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Exactly nine characters from ``[a-zA-Z0-9]`` (Mistral rejects anything else with code 3280). An
    ID already of that shape is kept on its first use; every other call gets nine characters of a hash
    of its ID and its position, so the mapping is deterministic and never gives two calls one ID."""
    if _no_tool_parts(messages):
        return tuple(messages)
    used: set[str] = set()
    new_ids = []
    for position, call in enumerate(_tool_calls(messages)):
        chosen = call.id if _MISTRAL_ID.fullmatch(call.id) and call.id not in used else None
        salt = 0
        while chosen is None or chosen in used:
            chosen = _base62_digest(f"{call.id}#{position}#{salt}", _MISTRAL_ID_LENGTH)
            salt += 1
        used.add(chosen)
        new_ids.append(chosen)
    return _rebind(messages, new_ids)


def neutral_ids_for_new_calls(calls: Sequence[ToolCall], history: Sequence[Message]) -> tuple[ToolCall, ...]:
    """Calls a provider just returned, with IDs the host can keep: neutral, unique among themselves
    and unused in ``history``. Valid free IDs (Claude's ``toolu_...``) pass through unchanged."""
    taken = {call.id for call in _tool_calls(history)}
    new_ids = _unique_ids([_readable_neutral_id(call.id) for call in calls], taken)
    return tuple(replace(call, id=new_id) for call, new_id in zip(calls, new_ids, strict=True))


def _no_tool_parts(messages: Sequence[Message]) -> bool:
    """No tool call or result anywhere: no ID to rewrite (most requests), so nothing is rebuilt."""
    for message in messages:
        for part in message.parts:
            if isinstance(part, _TOOL_PARTS):
                return False
    return True


def _tool_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """All tool calls of the conversation in order: message order, then part order."""
    return [call for message in messages for call in message.tool_calls()]


def _renumbered_k2_ids(calls: Sequence[ToolCall]) -> list[str]:
    return [k2_id(call.name, index) for index, call in enumerate(calls)]


def _repaired_k2_ids(calls: Sequence[ToolCall]) -> list[str]:
    kept = _kept_k2_indices(calls)
    # Fresh indices start past every kept one, so no index in use is ever handed out twice.
    fresh = itertools.count(max((index for index in kept if index is not None), default=-1) + 1)
    return [k2_id(call.name, next(fresh) if index is None else index) for call, index in zip(calls, kept, strict=True)]


def _kept_k2_indices(calls: Sequence[ToolCall]) -> list[int | None]:
    """Per call, the index of its ID if the ID is kept as it is, else ``None``.

    Kept: exactly ``functions.{name}:{idx}`` for the call's own name, first use in the conversation.
    A repeated ID (a host that resets the counter per turn) is repaired, so that K2, which reads every
    ID back, never sees two calls it cannot tell apart.
    """
    kept_ids: set[str] = set()
    indices: list[int | None] = []
    for call in calls:
        index = _canonical_k2_index(call)
        if index is None or call.id in kept_ids:
            indices.append(None)
        else:
            kept_ids.add(call.id)
            indices.append(index)
    return indices


def _canonical_k2_index(call: ToolCall) -> int | None:
    parsed = parse_k2_id(call.id)
    if parsed is None or call.id != k2_id(call.name, parsed[1]):
        return None
    return parsed[1]


def _rebind(messages: Sequence[Message], new_call_ids: Sequence[str]) -> tuple[Message, ...]:
    """Give the n-th tool call ``new_call_ids[n]`` and every result the new ID of the call it answers."""
    new_ids = iter(new_call_ids)
    latest: dict[str, str] = {}  # original call ID → new ID of the most recent call that had it
    return tuple(
        replace(message, parts=tuple(_rebind_part(part, new_ids, latest) for part in message.parts))
        if any(isinstance(part, _TOOL_PARTS) for part in message.parts)
        else message  # nothing to rebind: kept as it is, not copied (most messages, on every request)
        for message in messages
    )


def _rebind_part(part: Part, new_ids: Iterator[str], latest: dict[str, str]) -> Part:
    if isinstance(part, ToolCall):
        new_id = next(new_ids)
        latest[part.id] = new_id
        return replace(part, id=new_id)
    if isinstance(part, ToolResult):
        if part.call_id not in latest:
            raise InvalidRequestError(
                f"tool_result refers to tool_use id {part.call_id!r}, which no earlier assistant turn made"
            )
        return replace(part, call_id=latest[part.call_id])
    return part


def _unique_ids(preferred: Sequence[str], taken: Iterable[str], max_length: int = _MAX_ID_LENGTH) -> list[str]:
    """Make ``preferred`` unique and disjoint from ``taken``.

    The first holder of a free preferred ID keeps it; later holders get the smallest free ``_2``,
    ``_3``, … suffix. A suffixed ID also avoids every preferred ID, so it never takes the ID that a
    later call would have kept.
    """
    used = set(taken)
    blocked = used | set(preferred)
    unique: list[str] = []
    for wanted in preferred:
        chosen = _first_free_suffixed(wanted, blocked, max_length) if wanted in used else wanted
        used.add(chosen)
        blocked.add(chosen)
        unique.append(chosen)
    return unique


def _first_free_suffixed(base: str, blocked: set[str], max_length: int) -> str:
    counter = 2
    while (candidate := _with_suffix(base, f"_{counter}", max_length)) in blocked:
        counter += 1
    return candidate


def _with_suffix(base: str, suffix: str, max_length: int) -> str:
    return base[: max_length - len(suffix)] + suffix


def _claude_preferred_id(call_id: str) -> str:
    return call_id if _is_neutral(call_id) else claude_safe_id(call_id)


def _short_safe_id(call_id: str, max_length: int) -> str:
    if _is_neutral(call_id) and len(call_id) <= max_length:
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LENGTH]
    return f"{_sanitized(call_id)[: max_length - 1 - _HASH_LENGTH]}_{digest}"


def _base62_digest(text: str, length: int) -> str:
    number = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), "big")
    chars = []
    for _ in range(length):
        number, remainder = divmod(number, 62)
        chars.append(_BASE62[remainder])
    return "".join(chars)


def _readable_neutral_id(raw: str) -> str:
    """``functions.read_file:7`` → ``functions_read_file_7``: still says which call it was in a host log.
    A valid ID maps to itself."""
    return _sanitized(raw)[:_MAX_ID_LENGTH] or "call"


def _sanitized(raw: str) -> str:
    return _NOT_NEUTRAL_CHAR.sub("_", raw)


def _is_neutral(call_id: str) -> bool:
    return NEUTRAL_ID_PATTERN.fullmatch(call_id) is not None
