"""After the answer: read it, validate it against the caller's schema, and on a miss send it back once
with the validation errors (one repair turn, its tokens and cost added to the call's), then give up
with ``INVALID_OUTPUT``. A refusal is ``CONTENT_FILTERED``; a turn that calls the caller's tools is not
an answer yet and passes through unvalidated.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from colibri_router.conversation import (
    AssistantTurn,
    CompletionRequest,
    Message,
    OutputSpec,
    Text,
    ToolCall,
    ToolResult,
    Usage,
)
from colibri_router.errors import ColibriError, InvalidOutputError, error_family
from colibri_router.progress import CallProgress, Notify
from colibri_router.providers import Choice
from colibri_router.retry import Deadline
from colibri_router.router.runners import Ran, Run, runner_for
from colibri_router.settings import Settings
from colibri_router.structured.validate import Verdict, judge

Rerun = Callable[[CompletionRequest], Awaitable[Ran]]


@dataclass(frozen=True, slots=True)
class Settled:
    """The attempt's answer (the repair turn's, with both turns' usage and cost, when there was one) and
    the parsed value; ``answered`` False: the turn called tools, there is nothing to parse yet."""

    ran: Ran
    parsed: Any = None
    answered: bool = False


def rerun_on(
    choice: Choice, settings: Settings, deadline: Deadline, notify: Notify | None, client: httpx.AsyncClient | None
) -> Rerun:
    """How the repair turn is sent: the attempt's runner, connection and deadline."""

    async def rerun(request: CompletionRequest) -> Ran:
        runner = runner_for(choice.provider)
        connection = runner.open(choice.provider, settings)
        progress = CallProgress(choice.provider.name, notify)
        return await runner.run(Run(choice, request, connection, settings, deadline, progress, client))

    return rerun


async def settle(
    request: CompletionRequest, ran: Ran, schema: Mapping[str, Any], choice: Choice, rerun: Rerun
) -> Settled:
    output = request.output
    assert output is not None, "settle is for a request that asked for a shape"
    first = _parsed(ran, output, choice, schema)
    if isinstance(first, Settled):
        return first
    both = _both(ran, await rerun(_repair_request(request, ran.turn, output, first[1])))
    second = _parsed(both, output, choice, schema)
    if isinstance(second, Settled):
        return second
    text, verdict = second
    usage = both.turn.usage
    raise InvalidOutputError(
        f"the answer does not match response_schema after one repair turn: {verdict.errors[0]}",
        raw=text,
        tokens=(usage.prompt_tokens, usage.completion_tokens),
        cost_usd=both.cost_usd,
    )


def _parsed(ran: Ran, output: OutputSpec, choice: Choice, schema: Mapping[str, Any]) -> Settled | tuple[str, Verdict]:
    """The attempt settled (its answer parsed, or its turn called tools: nothing to parse yet), or the
    answer's text and what failed in it."""
    turn, text = _answer(ran.turn, output, choice)
    if turn is None:
        return Settled(ran)
    verdict = judge(text, schema)
    if verdict.ok:
        return Settled(replace(ran, turn=turn), verdict.value, True)
    return text, verdict


def _answer(turn: AssistantTurn, output: OutputSpec, choice: Choice) -> tuple[AssistantTurn | None, str]:
    """The turn with the answer as its text (a forced tool's input becomes the text), and that text;
    None when the turn calls the caller's tools instead."""
    if turn.stop_reason == "refusal" and not turn.tool_calls():
        raise _refused(turn, choice)
    calls = turn.tool_calls()
    forced = next((c for c in calls if output.form == "tool" and c.name == output.name), None)
    if forced is not None:
        text = json.dumps(dict(forced.arguments), ensure_ascii=False, separators=(",", ":"))
        parts = (*(p for p in turn.parts if not isinstance(p, ToolCall | Text)), Text(text))
        return replace(turn, parts=parts, stop_reason="end_turn"), text
    if calls:
        return None, ""
    return turn, turn.text()


def _refused(turn: AssistantTurn, choice: Choice) -> ColibriError:
    said = turn.text().strip()
    message = f"{choice.model} refused to answer" + (f": {said[:300]}" if said else "")
    return error_family(choice.provider.error_prefix).api(message, kind="CONTENT_FILTERED")


def _repair_request(
    request: CompletionRequest, turn: AssistantTurn, output: OutputSpec, verdict: Verdict
) -> CompletionRequest:
    """The conversation with the failed answer and a turn naming what is wrong with it."""
    problems = "\n".join(f"- {error}" for error in verdict.errors)
    ask = f"The answer does not match the JSON Schema:\n{problems}\nAnswer again with the corrected JSON only."
    forced = next((c for c in turn.tool_calls() if output.form == "tool" and c.name == output.name), None)
    if forced is not None:
        answer = Message("assistant", (forced,))
        reply = Message("user", (ToolResult(forced.id, ask, is_error=True),))
    else:
        answer = Message("assistant", (Text(turn.text() or "(no answer)"),))
        reply = Message("user", (Text(ask),))
    return replace(request, messages=(*request.messages, answer, reply))


def _both(first: Ran, second: Ran) -> Ran:
    """The repair turn's answer, with the tokens, cost and time of both turns."""
    a, b = first.turn.usage, second.turn.usage
    usage = Usage(
        prompt_tokens=a.prompt_tokens + b.prompt_tokens,
        completion_tokens=a.completion_tokens + b.completion_tokens,
        cached_tokens=a.cached_tokens + b.cached_tokens,
        cache_write_tokens=a.cache_write_tokens + b.cache_write_tokens,
        reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens,
    )
    cost = None if first.cost_usd is None or second.cost_usd is None else first.cost_usd + second.cost_usd
    return replace(
        second,
        turn=replace(second.turn, usage=usage, repairs=(*second.turn.repairs, "output_repaired")),
        latency_ms=first.latency_ms + second.latency_ms,
        ttft_ms=first.ttft_ms,
        cost_usd=cost,
        warnings=(*first.warnings, *second.warnings),
    )
