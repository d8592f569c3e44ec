"""router_ask_many's judge: the prompt it gets and the agreement score read back from its answer.

The judge sees the question (the conversation as plain lines, and the system prompt the models had)
and the answers that came, each under a letter (A, B, C...) instead of its model's name, so that no
model is favoured for its name. It is asked for a synthesis that names answers by their letter and
quotes none of them back (the host already has them), ending with a line ``AGREEMENT: <0..1>``.

Judges do not always follow the format: :func:`agreement` takes the last "agreement" followed by a
number anywhere in the answer, as a fraction (``0.8``), a percentage (``80%``), or a mark out of
5, 10 or 100 (``8/10``, bare ``8`` reads as 8/10 and ``80`` as 80/100). Without one, the verdict
has no ``agreement`` and its content is the judge's whole answer.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence

from colibri_router.conversation import Message, Text, ToolCall, ToolResult
from colibri_router.schema import RouterCallResult

JUDGE_SYSTEM = (
    "You compare answers that several AI models gave to the same question. The answers are labelled "
    "A, B, C...; you do not know which model wrote which."
)
JUDGE_TASK = (
    "Write a synthesis: where the answers agree, where they differ and which of them is right, and the "
    "best answer to the question. Refer to answers by their label and do not quote or repeat them: the "
    "reader has them. End with one line `AGREEMENT: <a number from 0 to 1>` (1: they say the same, "
    "0: they contradict each other)."
)
LABELS = string.ascii_uppercase
_SCORE = re.compile(
    r"agreement(?:\s+score)?\W{0,4}?\s*[:=]?\s*\**\s*(\d{1,3}(?:[.,]\d+)?)\s*(%|/\s*(?:100|10|5|1)\b)?",
    re.IGNORECASE,
)


def judge_prompt(
    question: Sequence[Message], system: str | None, answers: Sequence[RouterCallResult], instructions: str | None
) -> str:
    """The user turn the judge gets. ``answers`` are in label order."""
    parts = []
    if system:
        parts.append(f"The models' system prompt:\n{system}")
    parts.append(f"The question (the conversation so far):\n{render_conversation(question)}")
    for label, answer in zip(LABELS, answers, strict=False):
        parts.append(f"Answer {label}:\n{render_answer(answer)}")
    if instructions:
        parts.append(f"What to weigh:\n{instructions}")
    parts.append(JUDGE_TASK)
    return "\n\n".join(parts)


def render_conversation(messages: Sequence[Message]) -> str:
    """One line per text, tool call and tool result; reasoning is left out (it is not the question)."""
    if len(messages) == 1 and all(isinstance(part, Text) for part in messages[0].parts):
        return "".join(part.text for part in messages[0].parts if isinstance(part, Text))  # a prompt, as written
    lines = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, Text):
                lines.append(f"[{message.role}] {part.text}")
            elif isinstance(part, ToolCall):
                lines.append(f"[{message.role} calls {part.name}] {_compact(part.arguments)}")
            elif isinstance(part, ToolResult):
                lines.append(f"[tool result{' (error)' if part.is_error else ''}] {part.content}")
    return "\n".join(lines)


def render_answer(answer: RouterCallResult) -> str:
    lines = [answer.content] if answer.content else []
    lines.extend(f"[calls {call.name}] {_compact(call.input)}" for call in answer.tool_calls)
    return "\n".join(lines) or "(no text)"


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def agreement(text: str) -> tuple[float | None, str]:
    """The agreement score in [0, 1] the judge gave (None: none), and its text without the score's
    line when that line holds nothing else."""
    matches = list(_SCORE.finditer(text))
    if not matches:
        return None, text
    last = matches[-1]
    value = _as_fraction(last.group(1).replace(",", "."), (last.group(2) or "").replace(" ", ""))
    if value is None:
        return None, text
    start = text.rfind("\n", 0, last.start()) + 1
    end = text.find("\n", last.end())
    end = len(text) if end == -1 else end
    line = text[start:end]
    if re.fullmatch(r"[\W_]*", _SCORE.sub("", line)):  # the line is just the score (and markup)
        text = (text[:start] + text[end + 1 :]).strip()
    return value, text


def _as_fraction(number: str, scale: str) -> float | None:
    value = float(number)
    if scale == "%":
        value /= 100
    elif scale:
        value /= float(scale[1:])
    elif value > 10:
        value /= 100  # a bare 80: out of 100
    elif value > 1:
        value /= 10  # a bare 8: out of 10
    if not 0 <= value <= 1:
        return None
    return round(value, 3)
