"""Kimi K2: Moonshot's request rules, the model-family rules every host serving Kimi applies, builders.

``is_kimi_model`` / ``is_kimi_thinking_model`` recognise Kimi on any host (PROVIDER-FACTS §7.8);
``k2_id_problems`` and ``kimi_reasoning_problems`` are the family rules (K2's own tool-call IDs, reasoning
replayed on tool-call turns of thinking models) that OpenAI-wire hosts apply when they serve Kimi;
``validate_kimi_request`` is everything Moonshot itself checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .media_rules import openai_media_problems
from .openai_family_rules import tool_pairing_problems
from .openai_wire import chat_completion, openai_sse_events, tool_call_objects
from .replies import MessageReply
from .routes import Problem, has_bearer, one_of
from .structured_rules import openai_response_format_problems

KIMI_MODEL = "kimi-k2-0905-preview"
KIMI_ROLES = frozenset({"system", "user", "assistant", "tool"})
KIMI_ALIASES = frozenset({"kimi-latest", "kimi-thinking-preview"})
MAX_KIMI_TOOLS = 128

_K2_ID = re.compile(r"^functions\.(?P<name>.+):(?P<index>\d+)$")
_KIMI_NAME = re.compile(r"kimi[-_.]?k\d", re.IGNORECASE)
_KIMI_REASONING_NAME = re.compile(r"thinking|kimi[-_.]?k(?:2[.p-][5-9]|[3-9])", re.IGNORECASE)
_HOST_PREFIX = re.compile(r"^(?:moonshot|moonshotai)\.", re.IGNORECASE)  # Bedrock's "moonshot.kimi-k2..."


def _model_segment(model: object) -> str:
    """The model name without host prefixes and variant suffixes: the part the family is read from."""
    if not isinstance(model, str):
        return ""
    last = model.rsplit("/", 1)[-1].lstrip("~")
    return _HOST_PREFIX.sub("", last).split(":", 1)[0].lower()


def is_kimi_model(model: object) -> bool:
    """Whether ``model`` names a Kimi K2+ model on any host (``moonshotai/Kimi-K2.5``, ``kimi-k2p6``...)."""
    segment = _model_segment(model)
    return bool(_KIMI_NAME.search(segment)) or segment in KIMI_ALIASES


def is_kimi_thinking_model(model: object) -> bool:
    """Whether ``model`` is a Kimi model that reasons: ``thinking`` in its name, or K2.5 and later."""
    return is_kimi_model(model) and bool(_KIMI_REASONING_NAME.search(_model_segment(model)))


def kimi_reasoning_problems(messages: Any, fields: Iterable[str] = ("reasoning_content",)) -> list[Problem]:
    """Assistant tool-call messages of a thinking model that do not carry their reasoning back in ``fields``."""
    accepted = tuple(fields)
    return [
        Problem(f"thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}")
        for i, msg in enumerate(messages if isinstance(messages, list) else [])
        if isinstance(msg, dict)
        and msg.get("role") == "assistant"
        and msg.get("tool_calls")
        and not any(msg.get(field) for field in accepted)
    ]


def k2_id_problems(messages: Any, *, strict: bool = True) -> list[Problem]:
    """Tool calls without an ID, name or string arguments; with ``strict``, IDs that are not K2's own
    ``functions.{name}:{idx}`` with an index unique in the conversation."""
    problems: list[Problem] = []
    indices: set[int] = set()
    for i, msg in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(msg, dict) or msg.get("role") != "assistant" or not msg.get("tool_calls"):
            continue
        calls = msg["tool_calls"]
        if not isinstance(calls, list):
            problems.append(Problem(f"messages[{i}]: tool_calls must be a list"))
            continue
        for call in calls:
            problems += _k2_call_problems(i, call, strict, indices)
    return problems


def _k2_call_problems(i: int, call: Any, strict: bool, indices: set[int]) -> list[Problem]:
    if not isinstance(call, dict):
        return [Problem(f"messages[{i}]: a tool call must be an object")]
    function = call["function"] if isinstance(call.get("function"), dict) else {}
    call_id, name = call.get("id"), function.get("name")
    if not isinstance(call_id, str) or not call_id:
        return [Problem(f"messages[{i}]: a tool call needs an id")]
    if not isinstance(name, str) or not name or not isinstance(function.get("arguments"), str):
        return [Problem(f"messages[{i}]: a tool call needs function.name and function.arguments (a string)")]
    if not strict:
        return []
    match = _K2_ID.match(call_id)
    if match is None or match["name"] != name:
        return [Problem(f"messages[{i}]: tool call id {call_id!r} is not 'functions.{name}:<index>'")]
    if int(match["index"]) in indices:
        return [Problem(f"messages[{i}]: tool call index in {call_id!r} is already used in the conversation")]
    indices.add(int(match["index"]))
    return []


def validate_kimi_request(
    body: Any, headers: Mapping[str, str] | None = None, *, strict_ids: bool = True
) -> list[Problem]:
    """Why Moonshot would refuse this chat-completions request; ``[]`` if it would accept it.

    ``headers=None`` skips the header checks. ``strict_ids`` requires K2's own ``functions.{name}:{idx}``
    tool-call IDs with conversation-unique indices; without it any non-empty ID passes, as on Moonshot.
    Tool messages must answer the tool calls of the assistant message right before them (OpenAI's rule).
    """
    problems = kimi_auth_problems(headers) if headers is not None else []
    if not isinstance(body, dict):
        return [*problems, Problem("request body must be a JSON object")]
    model = body.get("model")
    if not isinstance(model, str) or not model:
        problems.append(Problem("model is required"))
    if "max_completion_tokens" in body:
        problems.append(Problem("max_completion_tokens is not supported, use max_tokens"))
    temperature = body.get("temperature")
    if temperature is not None and not (isinstance(temperature, int | float) and 0 <= temperature <= 1):
        problems.append(Problem(f"temperature {temperature!r} is out of range [0, 1]"))
    if body.get("tool_choice", "auto") not in ("auto", "none", None):
        problems.append(Problem(f"tool_choice {body['tool_choice']!r} is not supported, use 'auto' or 'none'"))
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        problems.append(Problem("tools must be a list"))
    elif len(tools) > MAX_KIMI_TOOLS:
        problems.append(Problem(f"too many tools: at most {MAX_KIMI_TOOLS} are allowed"))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, Problem("messages must be a non-empty list")]
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not one_of(msg.get("role"), KIMI_ROLES):
            problems.append(Problem(f"messages[{i}]: role must be one of {sorted(KIMI_ROLES)}"))
        elif msg["role"] == "assistant" and msg.get("tool_calls") and msg.get("content") == "":
            problems.append(Problem(f"messages[{i}]: text content is empty in an assistant tool call message"))
        elif msg["role"] == "tool" and not msg.get("content"):
            problems.append(Problem(f"messages[{i}]: tool message content must not be empty"))
    if is_kimi_thinking_model(model):
        problems += kimi_reasoning_problems(messages)
    problems += openai_media_problems(body)
    problems += openai_response_format_problems(body, host="kimi")
    return problems + k2_id_problems(messages, strict=strict_ids) + tool_pairing_problems(messages)


def kimi_auth_problems(headers: Mapping[str, str]) -> list[Problem]:
    if has_bearer(headers):
        return []
    return [
        Problem(
            "Invalid Authentication: missing 'Authorization: Bearer <key>' header",
            status=401,
            error_type="invalid_authentication_error",
        )
    ]


# ---------------------------------------------------------------------------------------------------------
# Builders


def kimi_text(
    text: str,
    *,
    model: str = KIMI_MODEL,
    finish_reason: str = "stop",
    reasoning: str | None = None,
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A Kimi chat.completion with a text answer (and ``reasoning_content`` for thinking models)."""
    msg = {"role": "assistant", "content": text}
    return MessageReply(chat_completion(msg, model, finish_reason, usage, reasoning), delay_s, hold_open_s)


def kimi_tool_calls(
    calls: Iterable[tuple[str, str, str]],
    *,
    text: str | None = None,
    reasoning: str | None = None,
    model: str = KIMI_MODEL,
    finish_reason: str = "tool_calls",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A Kimi chat.completion calling tools; ``calls`` are ``(id, name, arguments_json_text)``.

    Without ``text`` the content is ``""``, as Moonshot sends it (and refuses it when sent back).
    """
    msg = {"role": "assistant", "content": text or "", "tool_calls": tool_call_objects(calls)}
    return MessageReply(chat_completion(msg, model, finish_reason, usage, reasoning), delay_s, hold_open_s)


def kimi_sse_events(body: Mapping[str, Any]) -> list[str]:
    """The ``data:`` payloads of the chat.completion.chunk stream Kimi would send for ``body``.

    Role chunk, reasoning deltas, content deltas, per tool call one chunk with index/id/name and then the
    arguments in fragments, a finish chunk, a usage chunk (no choices; Moonshot always sends it), ``[DONE]``.
    """
    return openai_sse_events(body)
