"""``provider: "host"`` on both protocol eras, with the official client in memory (issue 31 §4).

A 2025 connection (``initialize``) gets ``sampling/createMessage`` as a request mid-call; a 2026-07-28
connection (``server/discover``), where a server sends no requests, gets it inside an
``InputRequiredResult`` and the client retries the call with its answer. The call runs once across
those rounds: what it did before asking (a paid upstream call) is not done again.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from fake_upstream import FakeUpstream
from fake_upstream.kimi import kimi_text
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitResult,
    ErrorData,
    InputRequiredResult,
    TextContent,
)
from sampling_host import Host

from colibri_router.server import build_server
from colibri_router.server.rounds import UNKNOWN_CALL

ERAS = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}


def answer(text: str) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text), model="m")


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error and result.structured_content is not None
    return result.structured_content["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_host_answers_through_sampling_on_both_eras(mode: str) -> None:
    host = Host()
    messages = [
        {"role": "user", "content": "First question"},
        {"role": "assistant", "content": "First answer"},
        {"role": "user", "content": "Second question"},
    ]
    arguments = {
        "provider": "host",
        "messages": messages,
        "system_prompt": "Be brief.",
        "max_tokens": 321,
        "temperature": 0.3,
        "model": "claude-sonnet-4-5",
    }
    async with Client(build_server(), mode=mode, sampling_callback=host) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call_tool("router_call", arguments)
        models = (await client.call_tool("router_models", {"provider": "host"})).structured_content

    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    structured = result.structured_content or {}
    assert structured["content"] == "host answer 1" and structured["model"] == "host-model-7"
    assert structured["provider"] == "host" and structured["cost_usd"] is None
    (params,) = host.asked
    assert [(m.role, m.content.text) for m in params.messages] == [  # type: ignore[union-attr]
        ("user", "First question"),
        ("assistant", "First answer"),
        ("user", "Second question"),
    ]
    assert (params.system_prompt, params.max_tokens, params.temperature) == ("Be brief.", 321, 0.3)
    assert params.model_preferences is not None
    assert [hint.name for hint in params.model_preferences.hints or []] == ["claude-sonnet-4-5"]
    assert models is not None and models["providers"][0]["configured"] is True


@pytest.mark.parametrize("mode", ERAS)
async def test_without_sampling_host_is_refused_naming_the_agents_on_both_eras(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})
        models = (await client.call_tool("router_models", {"provider": "host"})).structured_content
    error = error_of(result)
    assert error["code"] == "INVALID_REQUEST" and "declared no `sampling` capability" in error["message"]
    assert all(name in error["message"] for name in ("claude-code", "codex", "gemini-cli"))
    assert models is not None and models["providers"][0]["configured"] is False


async def test_the_2026_form_is_an_input_required_result_carrying_the_sampling_request() -> None:
    """Driven by hand: the first answer asks, the retry with the client's answer completes the call."""
    async with Client(build_server(), mode="2026-07-28", sampling_callback=Host()) as client:
        arguments = {"provider": "host", "prompt": "What is 2+2?", "max_tokens": 50}
        first = await client.session.call_tool("router_call", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        assert first.request_state
        ((key, request),) = (first.input_requests or {}).items()
        assert isinstance(request, CreateMessageRequest) and request.method == "sampling/createMessage"
        assert request.params.max_tokens == 50
        assert request.params.messages[0].content.text == "What is 2+2?"  # type: ignore[union-attr]

        final = await client.session.call_tool(
            "router_call",
            arguments,
            input_responses={key: answer("4")},
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(final, CallToolResult) and not final.is_error
        assert (final.structured_content or {})["content"] == "4"

        # The call's answer was collected: a replay of its state is refused with a code.
        replay = await client.session.call_tool(
            "router_call",
            arguments,
            input_responses={key: answer("5")},
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(replay, CallToolResult)
        assert error_of(replay)["code"] == "INVALID_REQUEST" and error_of(replay)["message"] == UNKNOWN_CALL


async def test_a_retry_without_the_answer_is_asked_again_and_a_wrong_answer_is_a_host_error() -> None:
    async with Client(build_server(), mode="2026-07-28", sampling_callback=Host()) as client:
        arguments = {"provider": "host", "prompt": "hi"}
        first = await client.session.call_tool("router_call", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        again = await client.session.call_tool(
            "router_call", arguments, request_state=first.request_state, allow_input_required=True
        )
        assert isinstance(again, InputRequiredResult)
        assert again.input_requests is not None and again.input_requests.keys() == first.input_requests.keys()  # type: ignore[union-attr]

        (key,) = again.input_requests
        wrong = await client.session.call_tool(
            "router_call",
            arguments,
            input_responses={key: ElicitResult(action="decline")},
            request_state=again.request_state,
            allow_input_required=True,
        )
    assert isinstance(wrong, CallToolResult)
    error = error_of(wrong)
    assert error["code"] == "HOST_API_ERROR" and "ElicitResult" in error["message"]


async def test_a_tampered_state_is_refused_by_the_sdk() -> None:
    async with Client(build_server(), mode="2026-07-28", sampling_callback=Host()) as client:
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                "router_call", {"provider": "host", "prompt": "hi"}, request_state="forged", allow_input_required=True
            )
        # The server keeps serving.
        assert not (await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})).is_error


@pytest.mark.parametrize("mode", ERAS)
async def test_what_a_call_did_before_asking_the_host_is_done_once(
    mode: str, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """router_ask_many with a paid model and the host twice: Kimi is asked once, however many rounds
    the host's answers take, and the progress after the host answered reaches the client."""
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-0123456789")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    fake_upstream.kimi.enqueue(kimi_text("from kimi"))
    host = Host()
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with Client(build_server(), mode=mode, sampling_callback=host) as client:
        result = await client.call_tool(
            "router_ask_many",
            {"models": ["kimi:kimi-k2.6", "host:a", "host:b"], "prompt": "hi"},
            progress_callback=on_progress,
        )

    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    answers = (result.structured_content or {})["answers"]
    assert [a["provider"] for a in answers] == ["kimi", "host", "host"]
    assert answers[0]["content"] == "from kimi"
    assert sorted(a["content"] for a in answers[1:]) == ["host answer 1", "host answer 2"]
    assert len([r for r in fake_upstream.requests if r.route == "kimi"]) == 1
    assert len(host.asked) == 2
    assert any(message.startswith("3/3") for message in progress), progress


async def test_a_host_that_refuses_on_2026_ends_the_call_on_the_client_and_the_server_serves_on() -> None:
    """On 2026-07-28 the refusal stays on the client: the SDK's client ends its own call with the
    callback's error (the server never hears of it)."""

    async def refusing(context: Any, params: CreateMessageRequestParams) -> ErrorData:
        return ErrorData(code=-1, message="the user declined")

    async with Client(build_server(), mode="2026-07-28", sampling_callback=refusing) as client:
        with pytest.raises(MCPError, match="the user declined"):
            await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})
        models = await client.call_tool("router_models", {"provider": "host"})
    assert not models.is_error


async def test_a_host_that_refuses_on_2025_is_a_host_error_result() -> None:
    async def refusing(context: Any, params: CreateMessageRequestParams) -> ErrorData:
        return ErrorData(code=-1, message="the user declined")

    async with Client(build_server(), mode="legacy", sampling_callback=refusing) as client:
        result = await client.call_tool("router_call", {"provider": "host", "prompt": "hi"})
    error = error_of(result)
    assert error["code"] == "HOST_API_ERROR" and "the user declined" in error["message"]


async def test_a_call_left_waiting_ends_at_its_deadline_as_on_2025_and_a_late_retry_gets_that(
    fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2026 client that refuses never tells the server (its SDK ends the call locally): the call left
    waiting ends at its deadline as a 2025 call whose host never answers does, with no fallback run
    after it, and a late retry collects that error."""
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-0123456789")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    arguments = {"provider": "host", "prompt": "hi", "timeout_s": 0.2, "fallback": ["kimi:kimi-k2.6"]}
    async with Client(build_server(), mode="2026-07-28", sampling_callback=Host()) as client:
        first = await client.session.call_tool("router_call", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        await anyio.sleep(2.0)  # well past the call's 0.2 s deadline, with no retry
        (key,) = first.input_requests or {}
        late = await client.session.call_tool(
            "router_call",
            arguments,
            input_responses={key: answer("late")},
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(late, CallToolResult)
    assert error_of(late)["code"] == "HOST_TIMEOUT"
    assert [r for r in fake_upstream.requests if r.route == "kimi"] == []
