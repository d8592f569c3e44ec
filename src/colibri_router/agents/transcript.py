"""A conversation as the prompt of a command-line agent: a plain transcript, or only what is new
since the agent's own session (which it resumes). Pure.

The agent's answer carries its session id as provider state on the text part (wire ``agent-cli``,
the provider's name, the session), so a thread (or a host that appends the returned turn) brings
it back: when the last assistant turn is this provider's, the CLI resumes that session and gets
only the turns after it. Otherwise the whole conversation is replayed as text: roles and text,
tool calls and results summarised in a line each (the agent runs its own tools, not the host's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from colibri_router.conversation import Message, ProviderState, Text, Thinking, ToolCall, ToolResult

WIRE = "agent-cli"
RESULT_CHARS = 2000  # a tool result in a replayed transcript: enough to follow, not the whole output


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    session: str | None  # the CLI session to resume, if any


def session_state(provider: str, session: str) -> ProviderState:
    return ProviderState(WIRE, {"provider": provider, "session": session})


def build_prompt(messages: tuple[Message, ...], provider: str, system: str | None, system_flag: bool) -> Prompt:
    """The prompt for ``provider``; ``system_flag``: the CLI takes the system prompt as a flag (else it
    heads the prompt, on a new session only: a resumed one has it already)."""
    start, session = _resumable(messages, provider)
    turns = messages[start:]
    body = _plain(turns) if session is None else _plain(turns, resumed=True)
    if system and not system_flag and session is None:
        body = f"System instructions:\n{system}\n\n{body}"
    return Prompt(body, session)


def _resumable(messages: tuple[Message, ...], provider: str) -> tuple[int, str | None]:
    """Where the new turns begin, and the session they continue (None: replay everything)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "assistant":
            continue
        for part in message.parts:
            if isinstance(part, Text) and part.state is not None and part.state.get(WIRE, "provider") == provider:
                session = part.state.get(WIRE, "session")
                if session and index + 1 < len(messages):
                    return index + 1, session
        break  # the last assistant turn is not this provider's session: replay
    return 0, None


def _plain(turns: tuple[Message, ...], *, resumed: bool = False) -> str:
    """One user turn of plain text is the prompt itself; anything longer is a labelled transcript."""
    if len(turns) == 1 and turns[0].role == "user" and all(isinstance(p, Text) for p in turns[0].parts):
        return "".join(p.text for p in turns[0].parts if isinstance(p, Text))
    lines = [] if resumed else ["The conversation so far (answer the last user turn):", ""]
    names: dict[str, str] = {}
    for message in turns:
        label = "User" if message.role == "user" else "Assistant"
        pieces = [_piece(part, names) for part in message.parts]
        text = "\n".join(piece for piece in pieces if piece)
        lines.append(f"{label}: {text}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _piece(part: object, names: dict[str, str]) -> str:
    if isinstance(part, Text):
        return part.text
    if isinstance(part, Thinking):
        return ""  # reasoning is the other model's working, not conversation
    if isinstance(part, ToolCall):
        names[part.id] = part.name
        arguments = json.dumps(dict(part.arguments), ensure_ascii=False, separators=(",", ":"))
        return f"[called tool {part.name} with {arguments}]"
    if isinstance(part, ToolResult):
        content = part.content if len(part.content) <= RESULT_CHARS else part.content[:RESULT_CHARS] + "…"
        status = "error from" if part.is_error else "result of"
        return f"[{status} tool {names.get(part.call_id, part.call_id)}: {content}]"
    return ""


def message_texts(messages: tuple[Message, ...]) -> list[str]:
    """Each message as plain text (tool calls and results summarised, a result under its call's tool
    name): what a text-only model reads."""
    names: dict[str, str] = {}
    return [
        "\n".join(piece for piece in (_piece(part, names) for part in message.parts) if piece) for message in messages
    ]
