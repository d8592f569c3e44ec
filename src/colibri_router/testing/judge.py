"""The ``judge`` assertion: one model call that grades the conversation against a rubric.

The judge sees the system prompt, the conversation up to the end of the assertion's scope (tool calls
and results written out), and the rubric; it answers a JSON object ``{"score": 0..1, "reason": ...}``.
The first such object in its answer counts; an answer without one fails the assertion saying so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from colibri_router.testing.caller import CallOrigin, ModelCall
from colibri_router.testing.expectations import Judge
from colibri_router.testing.matcher import compact_json

JUDGE_SYSTEM = (
    "You grade a conversation between a user, an AI assistant and the assistant's tools against a rubric. "
    'Answer with only a JSON object: {"score": <a number from 0 to 1>, "reason": "<one or two sentences>"}. '
    "1 means the rubric is fully met, 0 not at all."
)
JUDGE_PARAMS: dict[str, Any] = {"temperature": 0, "max_tokens": 1024}


@dataclass(frozen=True, slots=True)
class Verdict:
    score: float
    reason: str


def judge_call(
    assertion: Judge, system: str | None, messages: Sequence[dict[str, Any]], origin: CallOrigin
) -> ModelCall:
    conversation = render_transcript(system, messages)
    prompt = f"Rubric:\n{assertion.rubric}\n\nConversation:\n{conversation}"
    return ModelCall(
        model=assertion.model,
        system=JUDGE_SYSTEM,
        messages=[{"role": "user", "content": prompt}],
        params=dict(JUDGE_PARAMS),
        origin=origin,
    )


def render_transcript(system: str | None, messages: Sequence[dict[str, Any]]) -> str:
    """The conversation as plain lines a judge reads: who said what, which tools were called and answered."""
    lines = [f"[system] {system}"] if system else []
    for message in messages:
        role = message.get("role", "?")
        content = message.get("content", "")
        if isinstance(content, str):
            lines.append(f"[{role}] {content}")
            continue
        for block in content:
            kind = block.get("type")
            if kind == "text":
                lines.append(f"[{role}] {block.get('text', '')}")
            elif kind == "tool_use":
                lines.append(f"[{role} calls {block.get('name')}] {compact_json(block.get('input', {}))}")
            elif kind == "tool_result":
                flag = " (error)" if block.get("is_error") else ""
                lines.append(f"[tool result{flag}] {_result_text(block.get('content', ''))}")
    return "\n".join(lines)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def parse_verdict(text: str) -> Verdict | None:
    """The first JSON object in ``text`` with a numeric ``score`` between 0 and 1, or None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            score = value.get("score")
            if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1:
                return Verdict(score=float(score), reason=str(value.get("reason", "")))
        start = text.find("{", start + 1)
    return None
