"""Request rules of the OpenAI chat-completions wire: the shared ones and each host's own.

Every function returns the ``Problem``s the host would refuse the body for, each carrying the status,
type and code the host answers with. ``openai_family.validate_openai_request`` combines them per host.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .routes import Problem, objects, one_of

OPENAI_ROLES = frozenset({"developer", "system", "user", "assistant", "tool", "function"})

_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)


def tool_pairing_problems(messages: Any) -> list[Problem]:
    """Tool messages that do not answer the assistant ``tool_calls`` right before them, and calls left
    unanswered: every ID must be answered by a contiguous run of tool messages right after its message."""
    problems: list[Problem] = []
    open_ids: list[str] | None = None  # the calls the current run of tool messages answers
    answered: set[str] = set()
    opener = -1
    for i, msg in enumerate(messages if isinstance(messages, list) else []):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if open_ids is None:
                problems.append(
                    Problem(
                        f"messages[{i}]: messages with role 'tool' must be a response to a preceding message "
                        "with 'tool_calls'",
                        param=f"messages.[{i}].role",
                    )
                )
            elif call_id not in open_ids:
                problems.append(
                    Problem(
                        f"messages[{i}]: tool_call_id {call_id!r} answers none of the tool_calls of messages[{opener}]",
                        param=f"messages.[{i}].tool_call_id",
                    )
                )
            else:
                answered.add(call_id)
            continue
        problems += _unanswered(open_ids, answered, opener)
        open_ids = None
        if role == "assistant" and msg.get("tool_calls"):
            open_ids = [call["id"] for call in objects(msg["tool_calls"]) if isinstance(call.get("id"), str)]
            answered, opener = set(), i
    return problems + _unanswered(open_ids, answered, opener)


def _unanswered(open_ids: list[str] | None, answered: set[str], opener: int) -> list[Problem]:
    missing = [call_id for call_id in open_ids or [] if call_id not in answered]
    if not missing:
        return []
    return [Problem(_UNANSWERED.format(ids=", ".join(missing)), param=f"messages.[{opener}].role")]


def openai_structure_problems(body: Mapping[str, Any], *, object_arguments: bool = False) -> list[Problem]:
    """A model, a non-empty message list, known roles, and tool calls with an id, a name and arguments
    (a JSON string; ``object_arguments`` also accepts an object, as Mistral does)."""
    problems: list[Problem] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append(Problem("you must provide a model parameter", param="model"))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, Problem("messages: must be a non-empty list", param="messages")]
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not one_of(msg.get("role"), OPENAI_ROLES):
            problems.append(
                Problem(f"messages[{i}]: role must be one of {sorted(OPENAI_ROLES)}", param=f"messages[{i}]")
            )
            continue
        calls = msg.get("tool_calls") if msg["role"] == "assistant" else None
        if calls is not None and not isinstance(calls, list):
            problems.append(Problem(f"messages[{i}].tool_calls: must be a list", param=f"messages[{i}]"))
            continue
        for k, call in enumerate(calls or []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
                problems.append(Problem(f"messages[{i}].tool_calls[{k}]: id is required", param=f"messages[{i}]"))
            elif not isinstance(function, dict) or not isinstance(function.get("name"), str):
                problems.append(Problem(f"messages[{i}].tool_calls[{k}]: function.name is required"))
            elif not isinstance(function.get("arguments"), str) and not (
                object_arguments and isinstance(function.get("arguments"), dict)
            ):
                problems.append(Problem(f"messages[{i}].tool_calls[{k}]: function.arguments must be a string"))
    return problems


# ---------------------------------------------------------------------------------------------------------
# OpenAI


OPENAI_MAX_CALL_ID = 40
_OPENAI_CALL_ID = re.compile(r"[A-Za-z0-9_-]+")

Sampling = Literal["plain", "never", "with_effort_none", "unless_effort_raised"]


@dataclass(frozen=True)
class ModelFamily:
    """OpenAI models whose names start with ``pattern`` and how they treat sampling parameters.

    ``plain``: not a reasoning model. The others reason and refuse ``max_tokens``; ``never``: only the
    default temperature (1); ``with_effort_none``: any temperature once ``reasoning_effort`` is "none";
    ``unless_effort_raised``: any temperature unless ``reasoning_effort`` is set above "none".
    """

    pattern: str
    sampling: Sampling


OPENAI_MODEL_FAMILIES: tuple[ModelFamily, ...] = (  # first match wins (PROVIDER-FACTS §1.2, pai live-verified)
    ModelFamily(r"gpt-5-chat", "plain"),
    ModelFamily(r"gpt-5(-mini|-nano|-pro|-codex)?(-\d{4}-\d\d-\d\d)?$", "never"),
    ModelFamily(r"gpt-5\.\d+-chat", "never"),
    ModelFamily(r"gpt-5\.1-codex", "never"),
    ModelFamily(r"gpt-5\.\d+-pro", "never"),
    ModelFamily(r"gpt-5\.[1-4](-|$)", "unless_effort_raised"),
    ModelFamily(r"gpt-5\.\d+", "with_effort_none"),
    ModelFamily(r"o\d", "never"),
)


def openai_model_family(model: object) -> ModelFamily:
    """The family ``model`` belongs to (``plain`` for every model the table does not name)."""
    for family in OPENAI_MODEL_FAMILIES:
        if isinstance(model, str) and re.match(family.pattern, model):
            return family
    return ModelFamily("", "plain")


def openai_problems(body: Mapping[str, Any]) -> list[Problem]:
    """OpenAI's own rules: tool-call IDs (≤ 40 characters of ``[A-Za-z0-9_-]``), temperature 0-2, and
    for reasoning models no ``max_tokens`` and no temperature but 1 where the family reasons."""
    problems = _openai_call_id_problems(body.get("messages"))
    family = openai_model_family(body.get("model"))
    temperature = body.get("temperature")
    if family.sampling != "plain" and "max_tokens" in body:
        problems.append(
            Problem(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                error_type="invalid_request_error",
                param="max_tokens",
                code="unsupported_parameter",
            )
        )
    if isinstance(temperature, int | float) and not 0 <= temperature <= 2:
        problems.append(
            Problem(
                f"Invalid 'temperature': expected a value between 0 and 2, but got {temperature} instead.",
                param="temperature",
                code="invalid_value",
            )
        )
    elif temperature not in (None, 1) and not _samples(family, body.get("reasoning_effort")):
        problems.append(
            Problem(
                f"Unsupported value: 'temperature' does not support {temperature} with this model. "
                "Only the default (1) value is supported.",
                param="temperature",
                code="unsupported_value",
            )
        )
    return problems


def _samples(family: ModelFamily, effort: object) -> bool:
    if family.sampling == "with_effort_none":
        return effort == "none"
    if family.sampling == "unless_effort_raised":
        return effort in (None, "none")
    return family.sampling == "plain"


def _openai_call_id_problems(messages: Any) -> list[Problem]:
    problems = []
    for i, msg in enumerate(objects(messages)):
        for k, call in enumerate(objects(msg.get("tool_calls")) if msg.get("role") == "assistant" else []):
            call_id, where = call.get("id"), f"messages[{i}].tool_calls[{k}].id"
            if not isinstance(call_id, str):
                continue
            if len(call_id) > OPENAI_MAX_CALL_ID:
                problems.append(
                    Problem(
                        f"Invalid '{where}': string too long. Expected a string with maximum length "
                        f"{OPENAI_MAX_CALL_ID}, but got a string with length {len(call_id)} instead.",
                        param=where,
                        code="string_above_max_length",
                    )
                )
            elif not _OPENAI_CALL_ID.fullmatch(call_id):
                problems.append(
                    Problem(
                        f"Invalid '{where}': {call_id!r} must contain only letters, digits, '_' and '-'.",
                        param=where,
                        code="invalid_value",
                    )
                )
    return problems


# ---------------------------------------------------------------------------------------------------------
# Mistral


MISTRAL_REQUEST_FIELDS = frozenset(
    {
        "model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "metadata",
        "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction",
        "parallel_tool_calls", "prompt_mode", "reasoning_effort", "safe_prompt", "guardrails", "prompt_cache_key",
    }
)  # fmt: skip
MISTRAL_MESSAGE_FIELDS: Mapping[str, frozenset[str]] = {
    "system": frozenset({"role", "content"}),
    "user": frozenset({"role", "content"}),
    "assistant": frozenset({"role", "content", "tool_calls", "prefix"}),
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
}
MISTRAL_TOOL_CHOICES = frozenset({"auto", "none", "any", "required"})
_MISTRAL_CALL_ID = re.compile(r"[a-zA-Z0-9]{9}")


def mistral_problems(body: Mapping[str, Any]) -> list[Problem]:
    """Mistral's own rules: only documented fields (422 ``extra_forbidden``), 9-character tool-call IDs
    (400 code 3280), no ``user`` right after ``tool`` and a last message that is user or tool (3230),
    ``tool_choice`` among auto/none/any/required or a named function (422)."""
    problems = [
        _extra_forbidden(("body", name), value) for name, value in body.items() if name not in MISTRAL_REQUEST_FIELDS
    ]
    choice = body.get("tool_choice")
    named = isinstance(choice, dict) and isinstance((choice.get("function") or {}).get("name"), str)
    if choice is not None and not named and not one_of(choice, MISTRAL_TOOL_CHOICES):
        problems.append(
            Problem(
                f"tool_choice: Input should be 'auto', 'none', 'any', 'required' or a named function, got {choice!r}",
                status=422,
                error_type="invalid_request_error",
            )
        )
    messages = objects(body.get("messages"))
    for i, msg in enumerate(messages):
        role = msg.get("role")
        allowed = MISTRAL_MESSAGE_FIELDS.get(role) if isinstance(role, str) else None
        if allowed is None:
            problems.append(
                Problem(
                    f"messages.{i}.role: Input should be 'system', 'user', 'assistant' or 'tool', got {role!r}",
                    status=422,
                    error_type="invalid_request_error",
                )
            )
        problems += [
            _extra_forbidden(("body", "messages", i, str(role), name), msg[name])
            for name in msg
            if allowed is not None and name not in allowed
        ]
        ids = [call.get("id") for call in objects(msg.get("tool_calls"))] if role == "assistant" else []
        ids += [msg.get("tool_call_id")] if role == "tool" else []
        problems += [_bad_mistral_id(call_id) for call_id in ids if not _is_mistral_id(call_id)]
        if role == "user" and i and messages[i - 1].get("role") == "tool":
            problems.append(_order_problem("Unexpected role 'user' after role 'tool'"))
    if messages and messages[-1].get("role") not in ("user", "tool") and messages[-1].get("prefix") is not True:
        last = messages[-1].get("role")
        problems.append(
            _order_problem(
                f"Expected last role User or Tool (or Assistant with prefix True) for serving but got {last}"
            )
        )
    return problems


def _is_mistral_id(call_id: object) -> bool:
    return isinstance(call_id, str) and _MISTRAL_CALL_ID.fullmatch(call_id) is not None


def _bad_mistral_id(call_id: object) -> Problem:
    return Problem(
        f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9.",
        error_type="invalid_function_call",
        code="3280",
    )


def _order_problem(message: str) -> Problem:
    return Problem(message, error_type="invalid_request_message_order", code="3230")


def _extra_forbidden(loc: tuple[str | int, ...], value: Any) -> Problem:
    detail = {"type": "extra_forbidden", "loc": list(loc), "msg": "Extra inputs are not permitted", "input": value}
    return Problem(
        f"{'.'.join(map(str, loc))}: Extra inputs are not permitted (extra_forbidden)",
        status=422,
        error_type="invalid_request_error",
        extra={"message": {"detail": [detail]}},
    )


# ---------------------------------------------------------------------------------------------------------
# OpenRouter and Fireworks


_OPENROUTER_MODEL = re.compile(r"~?[A-Za-z0-9][\w.-]*/[\w.:-]+")
FIREWORKS_MAX_UNSTREAMED_TOKENS = 4096


def openrouter_problems(body: Mapping[str, Any]) -> list[Problem]:
    """OpenRouter takes ``max_tokens`` only, and model IDs ``vendor/model`` (``:variant``, leading ``~``)."""
    problems = []
    if "max_completion_tokens" in body:
        problems.append(Problem("max_completion_tokens is not supported by OpenRouter, use max_tokens"))
    model = body.get("model")
    if isinstance(model, str) and not _OPENROUTER_MODEL.fullmatch(model):
        problems.append(Problem(f"{model} is not a valid model ID"))
    return problems


def fireworks_problems(body: Mapping[str, Any]) -> list[Problem]:
    """Fireworks refuses unstreamed requests asking for more than 4096 tokens."""
    max_tokens = body.get("max_tokens")
    if body.get("stream") is True or not isinstance(max_tokens, int) or max_tokens <= FIREWORKS_MAX_UNSTREAMED_TOKENS:
        return []
    return [
        Problem(
            f"Requests with max_tokens > {FIREWORKS_MAX_UNSTREAMED_TOKENS} must have stream=true",
            error_type="error",
            param="max_tokens",
            code="BAD_REQUEST",
        )
    ]
