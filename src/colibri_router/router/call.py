"""The one internal call object: what a tool's input becomes where a call enters, and what the router takes.

A service converts its tool input once (:func:`call_of`, with the files read by
:func:`~colibri_router.router.attachments.read_files`) into a frozen :class:`Call`: the conversation
as the neutral :class:`~colibri_router.conversation.Message` parts, the files read, and the
:class:`Options`. Nothing below the service sees the tool's pydantic input again; the Anthropic shape
comes back only where a thread is stored and where the result's ``message`` is shaped.

The files are appended as parts to the last user turn of the call's own turns when a request is built
(:meth:`Call.messages`), and a command-line agent gets their paths instead (it reads them itself, with
its own tools), so their text is never inlined for it. The router answers with an :class:`Outcome`:
the result a host reads, plus what only in-process callers use (the repairs, the assistant turn).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from colibri_router.conversation import Message, Part, Reasoning, Text, ToolChoice, ToolSpec
from colibri_router.errors import InvalidRequestError
from colibri_router.router.attachments import read_files
from colibri_router.settings import Settings

if TYPE_CHECKING:
    from colibri_router.context import Reading
    from colibri_router.schema import RouterCallInput, RouterCallResult

__all__ = ["Call", "Options", "Outcome", "call_from", "call_of"]


@dataclass(frozen=True, slots=True)
class Options:
    """How the call is made. Each field is copied by name from router_call's input (:meth:`of`), so an
    option router_call gains is one field here (converted in :data:`_CONVERTED` if its shape changes)."""

    provider: str | None = None
    model: str | None = None
    fallback: tuple[str, ...] | None = None  # None: the config's fallback; (): none
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    system_prompt: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: Reasoning | None = None
    timeout_s: float | None = None
    max_cost_usd: float | None = None
    response_schema: dict[str, Any] | None = None  # the caller's JSON Schema, as given
    response_schema_name: str | None = None

    @classmethod
    def of(cls, args: RouterCallInput) -> Options:
        taken = {option.name: getattr(args, option.name) for option in fields(cls)}
        for name, convert in _CONVERTED.items():
            taken[name] = convert(args)
        return cls(**taken)


# The options whose internal shape differs from the input's.
_CONVERTED: dict[str, Any] = {
    "fallback": lambda args: None if args.fallback is None else tuple(args.fallback),
    "tools": lambda args: args.tool_specs(),
    "tool_choice": lambda args: args.tool_choice_spec(),
}


@dataclass(frozen=True, slots=True)
class Call:
    """One call as the router takes it. ``conversation``: the turns as asked (a thread's history
    first), without the files; ``reading``: the files read once where the call entered."""

    conversation: tuple[Message, ...]
    options: Options
    reading: Reading | None = None

    def messages(self, *, files_as_paths: bool = False) -> tuple[Message, ...]:
        """The conversation with the files appended to the last user turn: as parts, or (for a
        command-line agent, which runs in the workspace) as a list of their paths."""
        reading = self.reading
        if reading is None:
            return self.conversation
        appended: tuple[Part, ...] = tuple(reading.parts)
        if files_as_paths:
            if not reading.files:
                return self.conversation
            listing = "\n".join(f"- {file.path}" for file in reading.files)
            appended = (Text(f"\n\nRead these files yourself (paths from your working directory):\n{listing}"),)
        messages = list(self.conversation)
        last = _last_user(messages)
        assert last is not None  # call_of refuses files without a user turn
        messages[last] = replace(messages[last], parts=(*messages[last].parts, *appended))
        return tuple(messages)

    def after(self, history: tuple[Message, ...]) -> Call:
        """This call continuing a stored thread: its ``history`` first."""
        return replace(self, conversation=(*history, *self.conversation))

    def with_options(self, **changes: Any) -> Call:
        return replace(self, options=replace(self.options, **changes))


async def call_of(args: RouterCallInput, settings: Settings) -> Call:
    """``args`` (router_call's input, or one that extends it) as the router takes it: its ``files``
    read, once, to go into its last user turn."""
    return call_from(args, await read_files(args.files, settings))


def call_from(args: RouterCallInput, reading: Reading | None = None) -> Call:
    """``args`` as the router takes it, with ``reading`` (its files, already read) or none."""
    conversation = args.conversation()
    if reading is not None and _last_user(conversation) is None:
        raise InvalidRequestError("`files` go into the last user turn, and `messages` has none")
    return Call(conversation, Options.of(args), reading)


def _last_user(messages: tuple[Message, ...] | list[Message]) -> int | None:
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the router answers: the result a host reads, how the router repaired the model's tool
    calling (as data, for in-process callers: agent tests score it), and the assistant turn's parts
    (a thread stores them when they carry opaque state, such as an agent's session)."""

    result: RouterCallResult
    repairs: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()
    key: str | None = None  # the pool key that answered, by fingerprint (docs/keys.md); never the key

    @property
    def keeps_state(self) -> bool:
        """Whether the turn carries opaque state a thread must keep though the result has no ``message``."""
        return any(getattr(part, "state", None) is not None for part in self.parts)
