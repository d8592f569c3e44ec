"""``COLIBRI_CONFIRM_OVER_USD`` (issue 34 §3), with the official client in memory, on both protocol eras.

A client with an elicitation callback is asked one question naming the models and the worst case
before anything is sent: accepted, the call goes on; declined, dismissed or unanswered within the
call's deadline, it ends with ``CONFIRMATION_DECLINED`` and the fake upstream receives nothing. A
client without elicitation gets the threshold as a cost cap (``BUDGET_EXCEEDED``).
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from fake_upstream import FakeUpstream
from fake_upstream.anthropic import anthropic_text
from fake_upstream.kimi import kimi_text
from mcp import Client
from mcp.types import (
    CallToolResult,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    InputRequiredResult,
    TextContent,
)
from sampling_host import Host

from colibri_router.server import build_server

ERAS = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
KIMI = "kimi:kimi-k2.6"
CLAUDE = "claude-sonnet-4-5"
# Far below any priced call's worst case: every call with a price asks.
LOW = "0.000001"


class User:
    """The client's elicitation callback: answers every question with ``action``, remembering it."""

    def __init__(self, action: str = "accept") -> None:
        self.action = action
        self.asked: list[ElicitRequestParams] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params)
        return ElicitResult(action=self.action)  # type: ignore[arg-type]


@pytest.fixture
def upstream(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-0123456789")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_upstream.anthropic_base_url)
    return fake_upstream


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error and result.structured_content is not None, result
    return result.structured_content["error"]  # type: ignore[no-any-return]


def worst_in(question: str) -> float:
    match = re.search(r"up to \$([0-9.]+)", question)
    assert match, question
    return float(match.group(1))


@pytest.mark.parametrize("mode", ERAS)
async def test_an_accepted_question_lets_the_call_go_on(
    mode: str, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    upstream.kimi.enqueue(kimi_text("confirmed answer"))
    user = User("accept")
    async with Client(build_server(), mode=mode, elicitation_callback=user) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi", "max_tokens": 1000})
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    assert (result.structured_content or {})["content"] == "confirmed answer"
    (params,) = user.asked
    question = params.message  # type: ignore[union-attr]
    assert "\n" not in question and "kimi-k2.6" in question and "COLIBRI_CONFIRM_OVER_USD" in question
    assert worst_in(question) > 0
    assert len(upstream.kimi.requests) == 1


@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize("mode", ERAS)
async def test_a_refusal_ends_the_call_with_a_code_and_sends_nothing(
    mode: str, action: str, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    user = User(action)
    async with Client(build_server(), mode=mode, elicitation_callback=user) as client:
        result = await client.call_tool(
            "router_call", {"model": KIMI, "prompt": "hi", "fallback": [CLAUDE], "max_tokens": 1000}
        )
        usage = (await client.call_tool("router_usage", {"since": "today"})).structured_content
    error = error_of(result)
    assert (error["code"], error["kind"], error["retryable"]) == (
        "CONFIRMATION_DECLINED",
        "CONFIRMATION_DECLINED",
        False,
    )
    assert "declined" in error["message"] and "nothing was sent" in error["message"]
    assert len(user.asked) == 1  # asked once: the refusal is not asked again for the fallback
    assert upstream.requests == []
    assert usage is not None and usage["total"]["cost_usd"] == 0


@pytest.mark.parametrize("mode", ERAS)
async def test_below_the_threshold_or_without_one_nothing_is_asked(
    mode: str, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = User("decline")
    upstream.kimi.enqueue(kimi_text("one"), kimi_text("two"))
    async with Client(build_server(), mode=mode, elicitation_callback=user) as client:
        unset = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
        monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", "1000")
        below = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
    assert not unset.is_error and not below.is_error
    assert user.asked == []
    assert len(upstream.kimi.requests) == 2


@pytest.mark.parametrize("mode", ERAS)
async def test_without_elicitation_the_threshold_is_a_cost_cap(
    mode: str, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    async with Client(build_server(), mode=mode) as client:
        single = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
        many = await client.call_tool("router_ask_many", {"models": [KIMI, CLAUDE], "prompt": "hi"})
        monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", "1000")
        upstream.kimi.enqueue(kimi_text("under the cap"))
        under = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
    for result in (single, many):
        error = error_of(result)
        assert error["code"] == "BUDGET_EXCEEDED" and "COLIBRI_CONFIRM_OVER_USD" in error["message"]
        assert "cannot be asked" in error["message"]
    assert not under.is_error
    assert len(upstream.requests) == 1


@pytest.mark.parametrize("mode", ERAS)
async def test_ask_many_asks_once_naming_every_model_and_the_judge(
    mode: str, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    declining = User("decline")
    async with Client(build_server(), mode=mode, elicitation_callback=declining) as client:
        declined = await client.call_tool(
            "router_ask_many", {"models": [KIMI, CLAUDE], "judge": CLAUDE, "prompt": "hi", "max_tokens": 500}
        )
    assert error_of(declined)["code"] == "CONFIRMATION_DECLINED"
    assert upstream.requests == []

    upstream.kimi.enqueue(kimi_text("from kimi"))
    upstream.anthropic.enqueue(anthropic_text("from claude"), anthropic_text("A and B agree. Agreement: 0.9"))
    accepting = User("accept")
    async with Client(build_server(), mode=mode, elicitation_callback=accepting) as client:
        accepted = await client.call_tool(
            "router_ask_many", {"models": [KIMI, CLAUDE], "judge": CLAUDE, "prompt": "hi", "max_tokens": 500}
        )
    assert not accepted.is_error, accepted.content[0].text  # type: ignore[union-attr]
    for user in (declining, accepting):
        (params,) = user.asked
        question = params.message  # type: ignore[union-attr]
        assert question.count("kimi-k2.6") == 1 and question.count(CLAUDE) == 2  # a model and the judge
        prices = [float(p) for p in re.findall(r"\(\$([0-9.]+)\)", question)]
        assert len(prices) == 3 and worst_in(question) == pytest.approx(sum(prices), abs=2e-4)
    assert len(upstream.requests) == 3


async def test_unanswered_on_2025_ends_at_the_call_deadline(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)

    async def silent(context: Any, params: ElicitRequestParams) -> ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async with Client(build_server(), mode="legacy", elicitation_callback=silent) as client:
        result = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi", "timeout_s": 0.5})
    error = error_of(result)
    assert error["code"] == "CONFIRMATION_DECLINED" and "no answer" in error["message"]
    assert upstream.requests == []


async def test_unanswered_on_2026_ends_at_the_call_deadline_and_a_retry_collects_it(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Driven by hand: the first answer carries the question; retries without an answer ask it
    again until the call's deadline passes, then collect the refusal."""
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    arguments = {"model": KIMI, "prompt": "hi", "timeout_s": 0.3}
    async with Client(build_server(), mode="2026-07-28", elicitation_callback=User()) as client:
        first = await client.session.call_tool("router_call", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        ((key, request),) = (first.input_requests or {}).items()
        assert isinstance(request, ElicitRequest) and key.startswith("elicitation")
        assert "kimi-k2.6" in request.params.message
        answer: CallToolResult | InputRequiredResult = first
        while isinstance(answer, InputRequiredResult):
            await anyio.sleep(0.05)
            answer = await client.session.call_tool(
                "router_call", arguments, request_state=answer.request_state, allow_input_required=True
            )
    error = error_of(answer)
    assert error["code"] == "CONFIRMATION_DECLINED" and "no answer" in error["message"]
    assert upstream.requests == []


async def test_on_2026_a_wrong_answer_type_is_not_a_yes(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    async with Client(build_server(), mode="2026-07-28", elicitation_callback=User()) as client:
        arguments = {"model": KIMI, "prompt": "hi"}
        first = await client.session.call_tool("router_call", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        (key,) = first.input_requests or {}
        sampled = CreateMessageResult(role="assistant", content=TextContent(type="text", text="y"), model="m")
        wrong = await client.session.call_tool(
            "router_call",
            arguments,
            input_responses={key: sampled},
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(wrong, CallToolResult)
    assert error_of(wrong)["code"] == "INVALID_REQUEST"
    assert upstream.requests == []


async def test_on_2025_a_client_error_instead_of_an_answer_is_a_refusal(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)

    async def failing(context: Any, params: ElicitRequestParams) -> ErrorData:
        return ErrorData(code=-1, message="no dialog here")

    async with Client(build_server(), mode="legacy", elicitation_callback=failing) as client:
        result = await client.call_tool("router_call", {"model": KIMI, "prompt": "hi"})
    assert error_of(result)["code"] == "CONFIRMATION_DECLINED"
    assert upstream.requests == []


@pytest.mark.parametrize("mode", ERAS)
async def test_the_question_comes_before_the_hosts_model_is_asked(
    mode: str, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client with both sampling and elicitation: a declined call reaches neither the paid model nor
    the host's own model."""
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    host, user = Host(), User("decline")
    async with Client(build_server(), mode=mode, sampling_callback=host, elicitation_callback=user) as client:
        result = await client.call_tool("router_ask_many", {"models": [KIMI, "host:a"], "prompt": "hi"})
    assert error_of(result)["code"] == "CONFIRMATION_DECLINED"
    assert "host:a (no price)" in user.asked[0].message  # type: ignore[union-attr]
    assert host.asked == [] and upstream.requests == []


async def test_router_run_is_not_asked_and_each_of_its_model_calls_is_capped(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """router_run's cost is not known before its runs: it asks nothing, and each model call it makes
    is held to the threshold as a cost cap, so nothing above it is sent without a question."""
    monkeypatch.setenv("COLIBRI_CONFIRM_OVER_USD", LOW)
    scenario = {"colibri": 1, "name": "capped", "models": [KIMI], "prompt": "hi", "expect": [{"type": "no_tool_calls"}]}
    user = User("accept")
    async with Client(build_server(), mode="legacy", elicitation_callback=user) as client:
        result = await client.call_tool("router_run", {"scenario": scenario})
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    (model,) = (result.structured_content or {})["models"]
    assert model["errors"] == 1 and model["verdict"] == "error"
    assert model["results"][0]["error"]["code"] == "BUDGET_EXCEEDED"
    assert user.asked == [] and upstream.requests == []
