"""``router_call``'s ``files``: the router's side of :mod:`colibri_router.context`.

A service reads them once, where its call enters (:func:`read_files`), into the
:class:`~colibri_router.context.Reading` its :class:`~colibri_router.router.call.Call` carries: the
parts go into the last user turn of each request (:meth:`~colibri_router.router.call.Call.messages`),
the files are checked against each model's context limit (:func:`check_context`), and the result
says what was read (:func:`files_read_of`).
"""

from __future__ import annotations

import anyio

from colibri_router.context import DEFAULT_CONTEXT_TOKENS, Reading, gather
from colibri_router.conversation import CompletionRequest
from colibri_router.errors import InvalidRequestError
from colibri_router.pricing import context_window
from colibri_router.providers import Choice
from colibri_router.schema import FileReadOut
from colibri_router.session import current_session
from colibri_router.settings import Settings
from colibri_router.token_estimate import request_tokens

LARGEST_NAMED = 3  # files named in a context-limit refusal


async def read_files(files: list[str] | None, settings: Settings) -> Reading | None:
    """``router_call``'s ``files`` read, once, where a call enters; None when it gives none. A call
    that came over HTTP (the session says so) reads only COLIBRI_HTTP_FILES_ROOT."""
    if not files:
        return None
    over_http = current_session().over_http
    return await anyio.to_thread.run_sync(lambda: gather(list(files), settings, over_http=over_http))


def files_read_of(reading: Reading | None) -> list[FileReadOut] | None:
    """The result's ``files_read``: None when the call gave no ``files``."""
    if reading is None:
        return None
    return [
        FileReadOut(path=f.path, bytes=f.bytes, tokens_estimated=f.tokens_estimated, encoding=f.encoding)
        for f in reading.files
    ]


def check_context(reading: Reading | None, choice: Choice, request: CompletionRequest, settings: Settings) -> None:
    """A call with files must fit the context limit of the model it goes to (estimated), or nothing is sent."""
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
