"""``router_call``'s ``files``, read into its input: the router's side of :mod:`colibri_router.context`.

The files become blocks appended to the LAST user turn (a bare ``prompt`` becomes that turn), so a
thread stores exactly what was sent and a continuation sees the same context; ``files`` is then None
and the input keeps the :class:`~colibri_router.context.Reading` for the limits checked per model and
for the result's ``files_read``. Any service that takes router_call's input (one call, many models)
reads the files once here and hands the expanded input to the router.
"""

from __future__ import annotations

from dataclasses import replace

import anyio

from colibri_router.context import DEFAULT_CONTEXT_TOKENS, Reading, gather
from colibri_router.conversation import CompletionRequest, Text
from colibri_router.errors import InvalidRequestError
from colibri_router.pricing import context_window
from colibri_router.providers import Choice
from colibri_router.schema import FileReadOut, InputMessage, RouterCallInput
from colibri_router.session import current_session
from colibri_router.settings import Settings
from colibri_router.token_estimate import request_tokens

LARGEST_NAMED = 3  # files named in a context-limit refusal


async def with_files(args: RouterCallInput, settings: Settings) -> RouterCallInput:
    """``args`` with its ``files`` read into the last user turn; ``args`` itself when it has none. A
    call that came over HTTP (the session says so) reads only COLIBRI_HTTP_FILES_ROOT."""
    if not args.files:
        return args
    over_http = current_session().over_http
    reading = await anyio.to_thread.run_sync(lambda: gather(list(args.files or ()), settings, over_http=over_http))
    turns = args.new_turns()
    last_user = next((i for i in range(len(turns) - 1, -1, -1) if turns[i]["role"] == "user"), None)
    if last_user is None:
        raise InvalidRequestError("`files` go into the last user turn, and `messages` has none")
    content = turns[last_user]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    turns[last_user] = {"role": "user", "content": [*blocks, *reading.blocks()]}
    return args.with_reading([InputMessage.model_validate(turn) for turn in turns], reading)


def paths_for_agent(request: CompletionRequest, reading: Reading | None) -> CompletionRequest:
    """The request a command-line agent gets: the files' text and media, which :func:`with_files`
    appended to the last user turn, replaced by their paths. The agent runs in the workspace and
    reads them itself, with its own tools (issue 25: handed as paths, never inlined)."""
    if reading is None or not reading.files:
        return request
    messages = list(request.messages)
    last = max(i for i, message in enumerate(messages) if message.role == "user")
    asked = messages[last].parts[: len(messages[last].parts) - len(reading.parts)]
    listing = "\n".join(f"- {file.path}" for file in reading.files)
    note = Text(f"\n\nRead these files yourself (paths from your working directory):\n{listing}")
    messages[last] = replace(messages[last], parts=(*asked, note))
    return replace(request, messages=tuple(messages))


def files_read(args: RouterCallInput) -> list[FileReadOut] | None:
    return files_read_of(args.reading)


def files_read_of(reading: Reading | None) -> list[FileReadOut] | None:
    """The result's ``files_read``: None when the call gave no ``files``."""
    if reading is None:
        return None
    return [
        FileReadOut(path=f.path, bytes=f.bytes, tokens_estimated=f.tokens_estimated, encoding=f.encoding)
        for f in reading.files
    ]


def check_context(args: RouterCallInput, choice: Choice, request: CompletionRequest, settings: Settings) -> None:
    """A call with files must fit the context limit of the model it goes to (estimated), or nothing is sent."""
    reading: Reading | None = args.reading
    if reading is None:
        return
    limit, source = _limit(choice, request, settings)
    tokens = request_tokens(request)
    if tokens <= limit:
        return
    largest = sorted(reading.files, key=lambda f: f.tokens_estimated, reverse=True)[:LARGEST_NAMED]
    named = ", ".join(f"{f.path} ~{f.tokens_estimated}" for f in largest)
    # Over the model's own window, a model with a larger one may take it (router/reroute.py).
    larger = "" if settings.context_max_tokens is not None else ", or set COLIBRI_LONG_CONTEXT_MODEL"
    raise InvalidRequestError(
        f"the call with its files is about {tokens} tokens, over the limit of {limit} ({source}); largest "
        f"files: {named}. Send fewer files or narrower globs{larger}; nothing was sent"
    )


def _limit(choice: Choice, request: CompletionRequest, settings: Settings) -> tuple[int, str]:
    if settings.context_max_tokens is not None:
        return settings.context_max_tokens, "COLIBRI_CONTEXT_MAX_TOKENS"
    window = context_window(choice.provider.price_provider, choice.model)
    if window is not None:
        source = f"{choice.model}'s context window {window} minus max_tokens; COLIBRI_CONTEXT_MAX_TOKENS overrides it"
        return max(1, window - request.max_tokens), source
    return DEFAULT_CONTEXT_TOKENS, "the default when the model's window is unknown; set COLIBRI_CONTEXT_MAX_TOKENS"
