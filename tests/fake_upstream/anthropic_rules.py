"""What Anthropic's Messages API refuses: headers, parameters, role alternation, tool_use/tool_result
pairing, and the thinking rules (budget, temperature, forced tools, signed blocks coming back unchanged)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .media_rules import anthropic_media_problems
from .routes import Problem, lower_keys, objects, one_of
from .structured_rules import anthropic_output_problems

ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_TOOL_CHOICES = frozenset({"auto", "any", "tool", "none"})
MIN_THINKING_BUDGET = 1024
_CLAUDE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_THINKING_BLOCKS = ("thinking", "redacted_thinking")


@dataclass
class IssuedThinking:
    """The thinking a route handed out: signature → thinking text, and redacted_thinking data."""

    signatures: dict[str, str] = field(default_factory=dict)
    redacted: set[str] = field(default_factory=set)

    def copy(self) -> IssuedThinking:
        return IssuedThinking(dict(self.signatures), set(self.redacted))


def validate_anthropic_request(
    body: Any, headers: Mapping[str, str] | None = None, *, issued: IssuedThinking | None = None
) -> list[Problem]:
    """Why Anthropic would refuse this Messages request; ``[]`` if it would accept it.

    ``headers=None`` skips the header checks (x-api-key, anthropic-version). ``issued``: the thinking the
    service handed out; when given, every thinking block must carry one of its signatures with its text
    unchanged, and every redacted_thinking block its data (without it, signatures are not checked).
    """
    problems: list[Problem] = []
    if headers is not None:
        problems += anthropic_auth_problems(headers)
        if lower_keys(headers).get("anthropic-version") != ANTHROPIC_VERSION:
            problems.append(Problem(f"anthropic-version: header is required ({ANTHROPIC_VERSION})"))
    if not isinstance(body, dict):
        return [*problems, Problem("request body must be a JSON object")]
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append(Problem("model: Field required"))
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        problems.append(Problem("max_tokens: must be an integer >= 1"))
    temperature = body.get("temperature")
    if temperature is not None and not (isinstance(temperature, int | float) and 0 <= temperature <= 1):
        problems.append(Problem(f"temperature {temperature!r} is out of range [0, 1]"))
    problems += _tool_choice_problems(body.get("tool_choice"))
    problems += anthropic_output_problems(body, headers)
    thinking = _thinking_enabled(body.get("thinking"))
    if thinking:
        problems += _thinking_parameter_problems(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, Problem("messages: must be a non-empty list")]
    problems += _message_problems(messages)
    problems += anthropic_media_problems(messages)
    if _has_tool_blocks(messages) and not body.get("tools"):
        problems.append(Problem("tools: must be given when messages contain tool_use or tool_result blocks"))
    if thinking:
        problems += _final_turn_thinking_problems(messages)
    if issued is not None:
        problems += _signature_problems(messages, issued)
    return problems


def anthropic_auth_problems(headers: Mapping[str, str]) -> list[Problem]:
    if lower_keys(headers).get("x-api-key"):
        return []
    return [Problem("x-api-key header is required", status=401, error_type="authentication_error")]


def _tool_choice_problems(choice: Any) -> list[Problem]:
    if choice is None:
        return []
    if not isinstance(choice, dict) or not one_of(choice.get("type"), ANTHROPIC_TOOL_CHOICES):
        return [Problem(f"tool_choice: must be an object with type in {sorted(ANTHROPIC_TOOL_CHOICES)}")]
    if choice["type"] == "tool" and not choice.get("name"):
        return [Problem("tool_choice.name: Field required")]
    return []


def _thinking_enabled(thinking: Any) -> bool:
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _thinking_parameter_problems(body: Mapping[str, Any]) -> list[Problem]:
    problems = []
    thinking = body["thinking"]
    budget, max_tokens = thinking.get("budget_tokens"), body.get("max_tokens")
    if thinking["type"] == "enabled":
        if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
            problems.append(
                Problem(
                    f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_THINKING_BUDGET}"
                )
            )
        elif isinstance(max_tokens, int) and budget >= max_tokens:
            problems.append(Problem("`max_tokens` must be greater than `thinking.budget_tokens`"))
    if body.get("temperature") not in (None, 1):
        problems.append(Problem("`temperature` may only be set to 1 when thinking is enabled"))
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        problems.append(Problem("Thinking may not be enabled when tool_choice forces tool use."))
    return problems


def _message_problems(messages: list[Any]) -> list[Problem]:
    """Role alternation and the pairing of every tool_use with a tool_result in the next message."""
    problems = []
    seen_ids: set[str] = set()
    pending: set[str] = set()  # tool_use IDs of the previous assistant message, to answer now
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "system":
            problems.append(Problem(f"messages.{i}: role 'system' is not allowed, use the top-level system parameter"))
            continue
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            problems.append(Problem(f"messages.{i}: roles must alternate user/assistant starting with user"))
            continue
        blocks = objects(msg.get("content"))
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        if role == "user":
            problems += [
                Problem(f"messages.{i}: tool_result {rid!r} has no tool_use in the previous message")
                for rid in results
                if rid not in pending
            ]
            if pending - set(results):
                problems.append(
                    Problem(f"messages.{i}: tool_use ids {sorted(pending - set(results))} have no tool_result")
                )
            kinds = [b.get("type") for b in blocks]
            if results and kinds[: len(results)] != ["tool_result"] * len(results):
                problems.append(Problem(f"messages.{i}: tool_result blocks must come first in the content"))
            pending = set()
        else:
            if results:
                problems.append(Problem(f"messages.{i}: tool_result blocks are only allowed in user messages"))
            for use_id in uses:
                if not isinstance(use_id, str) or not _CLAUDE_ID.match(use_id):
                    problems.append(
                        Problem(f"messages.{i}: tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
                    )
                    continue
                if use_id in seen_ids:
                    problems.append(Problem(f"messages.{i}: tool_use ids must be unique, {use_id!r} is repeated"))
                seen_ids.add(use_id)
            pending = {u for u in uses if isinstance(u, str)}
    if pending:
        problems.append(Problem(f"messages: tool_use ids {sorted(pending)} have no tool_result after them"))
    return problems


def _final_turn_thinking_problems(messages: list[Any]) -> list[Problem]:
    """With thinking on, the final assistant message, if it called tools, must start with its thinking."""
    last = next(
        (
            (i, m)
            for i, m in reversed(list(enumerate(messages)))
            if isinstance(m, dict) and m.get("role") == "assistant"
        ),
        None,
    )
    if last is None:
        return []
    i, msg = last
    blocks = objects(msg.get("content"))
    if not any(b.get("type") == "tool_use" for b in blocks) or blocks[0].get("type") in _THINKING_BLOCKS:
        return []
    found = blocks[0].get("type")
    return [
        Problem(
            f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
            "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
            "lastmost set of `tool_use` and `tool_result` blocks)."
        )
    ]


def _signature_problems(messages: list[Any], issued: IssuedThinking) -> list[Problem]:
    problems = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") != "assistant":
            continue
        for k, block in enumerate(objects(msg.get("content"))):
            where = f"messages.{i}.content.{k}"
            if block.get("type") == "thinking":
                signature = block.get("signature")
                if not isinstance(signature, str):
                    problems.append(Problem(f"{where}.thinking.signature: Field required"))
                elif issued.signatures.get(signature) != block.get("thinking"):
                    problems.append(Problem(f"{where}: Invalid `signature` in `thinking` block"))
            elif block.get("type") == "redacted_thinking" and block.get("data") not in issued.redacted:
                problems.append(Problem(f"{where}: Invalid `data` in `redacted_thinking` block"))
    return problems


def _has_tool_blocks(messages: list[Any]) -> bool:
    return any(
        block.get("type") in ("tool_use", "tool_result")
        for msg in messages
        if isinstance(msg, dict)
        for block in objects(msg.get("content"))
    )
