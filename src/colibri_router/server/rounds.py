"""Tool calls that ask the host's model (or its user) on a 2026-07-28 connection, across input-required rounds.

From 2026-07-28 a server sends its client no requests. A call that needs the client's model answers
an ``InputRequiredResult`` instead: the ``sampling/createMessage`` requests (or the
``elicitation/create`` question of :mod:`.confirm`) in ``inputRequests`` and
an opaque ``requestState``; the client runs them and retries the call with its ``inputResponses``
and the state echoed (SEP-2322). The SDK's client drives those rounds by itself, and the SDK's
server seals the state (:class:`mcp.server.request_state.RequestStateBoundary`).

The router asks the host deep inside a call (a fallback, one of several models, a scenario's turn),
often after work that must not be done twice (paid upstream calls, ledger rows, thread writes), so a
call is not run again each round, as the SDK's ``Resolve``/``Sample`` resolvers are. It runs once, in
the server's task group (:func:`waiting_calls`, the server's lifespan), and waits where it asks the
host, as it waits for the client's answer on a 2025 connection. Each round hands the client's answers
to the waiting call and returns when the call asks again or finishes. The state names the call in
this process, so the rounds need the one process a stdio or in-memory connection has.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
from mcp.types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    InputResponses,
)

from colibri_router.errors import ColibriError, InvalidRequestError, error_family

HOST_PREFIX = "HOST"
# The SDK's request-state lifetime (RequestStateSecurity.ephemeral's ttl): after it no retry can name
# a call, so a finished call whose client never came back is forgotten then.
KEPT_S = 600.0
UNKNOWN_CALL = (
    "this retry names a call that no longer waits here: its answer was collected, it was cancelled, "
    f"or it finished over {KEPT_S:.0f} s ago. Call the tool again"
)

Sampled = CreateMessageResult | CreateMessageResultWithTools


class _Question:
    """One request to the client (the host's model, or a question to its user), waiting for its answer.
    ``expects``: the answer's types; ``wrong`` words a mismatched one as the call's error."""

    def __init__(
        self,
        request: CreateMessageRequest | ElicitRequest,
        expects: tuple[type, ...],
        wrong: Callable[[str], ColibriError],
    ) -> None:
        self.request = request
        self.expects = expects
        self.wrong = wrong
        self.answered = anyio.Event()
        self.answer: Any = None
        self.error: ColibriError | None = None


class WaitingCall:
    """A tool call running in the server's task group, which may stop to ask the host's model."""

    def __init__(self) -> None:
        self.token = secrets.token_urlsafe(18)
        # The request of the round being served (the SDK's Context): progress goes to its stream.
        self.context: Any = None
        self.scope = anyio.CancelScope()
        self.result: CallToolResult | None = None
        self.failure: Exception | None = None
        self.finished_at: float | None = None
        self._questions: dict[str, _Question] = {}
        self._keys = itertools.count(1)
        self._changed = anyio.Event()

    async def sample(self, params: CreateMessageRequestParams) -> Sampled:
        """Ask the host (the next round's ``inputRequests``) and wait for its answer."""

        def wrong(answered: str) -> ColibriError:
            return error_family(HOST_PREFIX).api(
                f"the host answered the sampling request with a {answered}, not a message"
            )

        question = _Question(
            CreateMessageRequest(params=params), (CreateMessageResult, CreateMessageResultWithTools), wrong
        )
        answer: Sampled = await self._ask("sampling", question)
        return answer

    async def elicit(self, params: ElicitRequestFormParams) -> ElicitResult:
        """Ask the client's user (the next round's ``inputRequests``) and wait for the answer."""

        def wrong(answered: str) -> ColibriError:
            return InvalidRequestError(f"the client answered the question with a {answered}, not an elicitation result")

        question = _Question(ElicitRequest(params=params), (ElicitResult,), wrong)
        answer: ElicitResult = await self._ask("elicitation", question)
        return answer

    async def _ask(self, kind: str, question: _Question) -> Any:
        key = f"{kind}-{next(self._keys)}"
        self._questions[key] = question
        self._change()
        try:
            await question.answered.wait()
        finally:
            del self._questions[key]
        if question.error is not None:
            raise question.error
        assert question.answer is not None
        return question.answer

    def deliver(self, responses: InputResponses | None) -> None:
        """The client's answers to the questions of the last round; one left unanswered is asked again."""
        for key, response in (responses or {}).items():
            question = self._questions.get(key)
            if question is None or question.answered.is_set():
                continue  # not ours, or answered already: a client's repeat changes nothing
            if isinstance(response, question.expects):
                question.answer = response
            else:
                question.error = question.wrong(type(response).__name__)
            question.answered.set()

    async def next_round(self) -> CallToolResult | InputRequiredResult:
        """The call's answer once it finishes, or its open questions once it asks.

        A cancelled round (the client gave up on the call) cancels the call."""
        try:
            while True:
                changed = self._changed
                if self.failure is not None:
                    raise self.failure
                if self.result is not None:
                    return self.result
                open_questions = {key: q for key, q in self._questions.items() if not q.answered.is_set()}
                if open_questions:
                    return InputRequiredResult(
                        input_requests={key: q.request for key, q in open_questions.items()},
                        request_state=self.token,
                    )
                await changed.wait()
        except anyio.get_cancelled_exc_class():
            self.scope.cancel()
            raise

    def finish(self, result: CallToolResult | None, failure: Exception | None) -> None:
        self.result, self.failure = result, failure
        self.finished_at = time.monotonic()
        self._change()

    def _change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


class WaitingCalls:
    """The calls of one server that may wait for their client between rounds, by state token."""

    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self._group = group
        self._calls: dict[str, WaitingCall] = {}

    def start(self, run: Callable[[WaitingCall], Awaitable[CallToolResult]]) -> WaitingCall:
        self._forget_old()
        call = WaitingCall()
        self._calls[call.token] = call
        # The task starts in a copy of this request's context (the caller, the trace), as an inline call would.
        self._group.start_soon(self._run, call, run)
        return call

    def resume(self, token: str, responses: InputResponses | None) -> WaitingCall:
        call = self._calls.get(token)
        if call is None:
            raise InvalidRequestError(UNKNOWN_CALL)
        call.deliver(responses)
        return call

    async def next_round(self, call: WaitingCall) -> CallToolResult | InputRequiredResult:
        answer = await call.next_round()
        if not isinstance(answer, InputRequiredResult):
            self._calls.pop(call.token, None)  # collected: a second retry naming it is refused
        return answer

    async def _run(self, call: WaitingCall, run: Callable[[WaitingCall], Awaitable[CallToolResult]]) -> None:
        result: CallToolResult | None = None
        failure: Exception | None = None
        with call.scope:
            try:
                result = await run(call)
            except Exception as error:  # the round hands it to the SDK, which answers it as inline
                failure = error
        if call.scope.cancel_called:  # its client gave up on it (see next_round): nobody collects it
            self._calls.pop(call.token, None)
            return
        call.finish(result, failure)

    def _forget_old(self) -> None:
        now = time.monotonic()
        for token, call in list(self._calls.items()):
            if call.finished_at is not None and now - call.finished_at > KEPT_S:
                del self._calls[token]


@asynccontextmanager
async def waiting_calls(_server: Any) -> AsyncIterator[WaitingCalls]:
    """The server's lifespan: the task group its waiting calls run in, for as long as it serves."""
    async with anyio.create_task_group() as group:
        yield WaitingCalls(group)
        group.cancel_scope.cancel()  # the connection is gone: nobody can collect a waiting call
