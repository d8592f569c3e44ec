"""router_call through the official MCP client, in memory: schema, annotations, results, errors.

The upstream is mocked with respx here (the MCP surface is what is under test); the real-socket
upstream and the real process are covered in tests/e2e.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx
from mcp import Client

from colibri_router.server import build_server

KIMI_URL = "https://api.moonshot.ai/v1/chat/completions"
CLAUDE_URL = "https://api.anthropic.com/v1/messages"


def kimi_body(text: str = "hello from kimi", **extra: Any) -> dict[str, Any]:
    return {
        "model": "kimi-k2-0905-preview",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
        **extra,
    }


def claude_body(text: str = "hello from claude") -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 6},
    }


@pytest.fixture
def upstream() -> Any:
    with respx.mock(assert_all_called=False) as mock:
        yield mock


async def call(arguments: dict[str, Any]) -> Any:
    async with Client(build_server()) as client:
        return await client.call_tool("router_call", arguments)


async def test_lists_the_tools_with_described_schemas_and_annotations() -> None:
    async with Client(build_server()) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == [
        "router_call",
        "router_ask_many",
        "router_models",
        "router_threads",
        "router_usage",
        "router_run",
        "router_job",
    ]
    by_name = {tool.name: tool for tool in tools}
    assert by_name["router_models"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert by_name["router_usage"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert by_name["router_run"].annotations.read_only_hint is False  # type: ignore[union-attr]  # it spends money
    assert by_name["router_run"].annotations.open_world_hint is True  # type: ignore[union-attr]
    tool = tools[0]
    properties = tool.input_schema["properties"]
    assert {
        "prompt", "messages", "provider", "model", "system_prompt", "max_tokens",
        "temperature", "tools", "tool_choice", "timeout_s",
    } <= set(properties)  # fmt: skip
    assert all(spec.get("description") for spec in properties.values())
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is True
    assert tool.annotations.open_world_hint is True
    output = tool.output_schema
    assert output is not None
    # The result, a job handle (docs/jobs.md), or the error object (tests/mcp/test_results_conform.py).
    success, handle, error = output["anyOf"]
    assert {"job_id", "status", "progress", "cost_usd", "next"} <= set(handle["properties"])
    assert error["required"] == ["error"]
    assert {
        "provider", "content", "model", "prompt_tokens", "completion_tokens", "latency_ms",
        "stop_reason", "tool_calls", "thinking", "warnings", "message", "ttft_ms", "cached_tokens",
        "cache_write_tokens", "reasoning_tokens", "cost_usd", "price_source", "attempts", "thread_id",
    } <= set(success["properties"])  # fmt: skip


async def test_the_tool_list_stays_small() -> None:
    """Hosts hand their model each tool's name, description and input schema on every turn (Claude
    Code, Codex and Gemini CLI turn an MCP tool into a function declaration of those three); the
    output schema is read by the host's client, which checks every result against it."""
    async with Client(build_server()) as client:
        tools = (await client.list_tools()).tools
    for_the_model = len(json.dumps([[tool.name, tool.description, tool.input_schema] for tool in tools]))
    size = len(json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]))
    print(f"tools/list: {size} characters for {len(tools)} tools, {for_the_model} of them for the model")
    assert for_the_model < 12_000
    # The whole list (output schemas included) is read once per connection by the host's client, not
    # by its model: a looser bound, against growth nobody meant.
    assert size < 40_000


# router_call's description plus input schema (as tools/list sends them, provider names included)
# before `files`, images and documents were added; they may cost the host at most 1,200 more.
ROUTER_CALL_BEFORE_FILES = 8_278
FILES_GROWTH_LIMIT = 1_200


async def test_files_and_media_grew_router_call_by_at_most_1200_characters() -> None:
    async with Client(build_server()) as client:
        tool = (await client.list_tools()).tools[0]
    size = len(tool.description or "") + len(json.dumps(tool.input_schema))
    print(f"router_call: {size} characters (+{size - ROUTER_CALL_BEFORE_FILES} for files and media)")
    assert "`files`" in (tool.description or "")
    assert "files" in tool.input_schema["properties"]
    assert size - ROUTER_CALL_BEFORE_FILES <= FILES_GROWTH_LIMIT


async def test_success_returns_structured_content_and_one_text_block(
    upstream: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-key")
    upstream.post(KIMI_URL).respond(json=kimi_body())
    result = await call({"prompt": "hi"})
    assert not result.is_error
    [block] = result.content
    structured = result.structured_content
    assert json.loads(block.text) == structured  # the same object, for hosts that read only the text
    assert structured["provider"] == "kimi"
    assert structured["content"] == "hello from kimi"
    assert structured["model"] == "kimi-k2-0905-preview"
    assert (structured["prompt_tokens"], structured["completion_tokens"]) == (3, 4)
    assert structured["stop_reason"] == "end_turn"
    assert isinstance(structured["latency_ms"], int)
    assert structured["message"] is None  # no tool calls: the host appends the text itself
    assert structured["attempts"][0]["outcome"] == "ok"


async def test_a_text_answer_is_read_once_by_the_hosts_model(
    upstream: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code hands its model the whole structuredContent: a text answer must not come twice."""
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-key")
    answer = "A sentence of a long answer. " * 70  # 2,030 characters
    upstream.post(KIMI_URL).respond(json=kimi_body(answer))
    result = await call({"prompt": "explain"})
    size = len(json.dumps(result.structured_content, separators=(",", ":")))
    print(f"structured result of a {len(answer)}-character answer: {size} characters")
    assert size <= len(answer) + 600


async def test_missing_key_is_an_error_result_starting_with_the_code() -> None:
    result = await call({"prompt": "hi", "provider": "kimi"})
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("KIMI_CONFIG_ERROR: ")
    assert "COLIBRI_KIMI_API_KEY" in text
    _, second_line = text.split("\n")
    assert json.loads(second_line) == result.structured_content  # hosts that read only text see it too
    error = result.structured_content["error"]
    assert (error["code"], error["kind"], error["retryable"]) == ("KIMI_CONFIG_ERROR", "CONFIG_ERROR", False)
    assert (error["provider"], error["model"], error["status"], error["retry_after_s"]) == (
        "kimi",
        "kimi-k2.6",
        None,
        None,
    )
    result = await call({"prompt": "hi", "provider": "claude"})
    assert result.content[0].text.startswith("ANTHROPIC_CONFIG_ERROR: ")


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({}, "exactly one of `prompt`"),
        ({"prompt": "a", "messages": [{"role": "user", "content": "b"}]}, "exactly one of `prompt`"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": "a", "provider": "gpt"}, "provider"),
        ({"prompt": "a", "max_tokens": 0}, "max_tokens"),
        ({"prompt": "a", "temperature": 3}, "temperature"),
        ({"prompt": "a", "surprise": 1}, "surprise"),
        ({"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "x", "name": "n"}]}]}, "assistant"),
    ],
)
async def test_invalid_arguments_get_a_readable_error_and_the_server_keeps_serving(
    arguments: dict[str, Any], needle: str, upstream: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-key")
    upstream.post(KIMI_URL).respond(json=kimi_body())
    async with Client(build_server()) as client:
        bad = await client.call_tool("router_call", arguments)
        good = await client.call_tool("router_call", {"prompt": "still there?"})
    assert bad.is_error
    assert needle in bad.content[0].text
    assert not good.is_error


async def test_env_is_read_at_call_time(upstream: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    route = upstream.post(KIMI_URL).respond(json=kimi_body())
    other = upstream.post("http://127.0.0.1:9/elsewhere/chat/completions").respond(json=kimi_body("moved"))
    async with Client(build_server()) as client:
        monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-first-key-0001")
        first = await client.call_tool("router_call", {"prompt": "one"})
        monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-second-key-0002")
        monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", "http://127.0.0.1:9/elsewhere")
        second = await client.call_tool("router_call", {"prompt": "two"})
    assert route.calls.last.request.headers["authorization"] == "Bearer sk-first-key-0001"
    assert other.calls.last.request.headers["authorization"] == "Bearer sk-second-key-0002"
    assert second.structured_content["content"] == "moved"
    assert not first.is_error


@pytest.mark.parametrize(
    ("arguments", "env", "expected"),
    [
        ({"model": "claude-haiku-4-5"}, {}, "claude"),
        ({"model": "kimi-k2-thinking"}, {"COLIBRI_DEFAULT_PROVIDER": "claude"}, "kimi"),
        ({"model": "moonshotai/Kimi-K2-Instruct"}, {}, "kimi"),
        ({}, {"COLIBRI_DEFAULT_PROVIDER": "claude"}, "claude"),
        ({}, {}, "kimi"),
        ({"provider": "claude", "model": "my-proxy-model"}, {}, "claude"),
    ],
)
async def test_provider_is_inferred_from_model_then_env_then_kimi(
    arguments: dict[str, Any],
    env: dict[str, str],
    expected: str,
    upstream: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    upstream.post(KIMI_URL).respond(json=kimi_body())
    upstream.post(CLAUDE_URL).respond(json=claude_body())
    result = await call({"prompt": "who are you?", **arguments})
    assert result.structured_content["provider"] == expected


async def test_upstream_failure_maps_to_a_stable_code_without_the_key(
    upstream: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-very-secret-key-42"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    upstream.post(CLAUDE_URL).respond(
        401,
        json={"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key {key}"}},
    )
    result = await call({"prompt": "hi", "provider": "claude"})
    text = result.content[0].text
    assert text.startswith("ANTHROPIC_API_ERROR: HTTP 401 authentication_error")
    assert key not in text
    assert key not in json.dumps(result.model_dump(mode="json"))


async def test_progress_is_reported_when_the_host_asks(
    upstream: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-key")
    stream = (
        'data: {"model":"kimi-k2","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
        'data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n'
        "data: [DONE]\n\n"
    )
    upstream.post(KIMI_URL).respond(headers={"content-type": "text/event-stream"}, text=stream)
    updates: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, message))

    async with Client(build_server()) as client:
        result = await client.call_tool("router_call", {"prompt": "hi"}, progress_callback=on_progress)
    assert result.structured_content["content"] == "Hello"
    assert isinstance(result.structured_content["ttft_ms"], int)
    assert updates, "no progress notification reached the host"
    assert [p for p, _ in updates] == sorted({p for p, _ in updates})  # strictly increasing
    assert all(message and message.startswith("kimi: ") for _, message in updates)


async def test_router_ask_many_is_listed_with_its_schemas_and_fails_only_when_every_model_fails(
    fake_upstream: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_upstream import error

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_upstream.anthropic_base_url)
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-0123456789")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    fake_upstream.anthropic.enqueue(error(401, error_type="authentication_error", message="invalid x-api-key"))
    fake_upstream.kimi.enqueue(error(401, error_type="invalid_authentication_error", message="Invalid Authentication"))
    models = ["claude-sonnet-4-5", "kimi-k2.6"]
    async with Client(build_server()) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "router_ask_many")
        failed = await client.call_tool("router_ask_many", {"prompt": "hi", "models": models})
        answered = await client.call_tool("router_ask_many", {"prompt": "hi", "models": models})
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tool.output_schema is not None
    assert {"answers", "total_cost_usd", "wall_ms", "verdict"} <= set(tool.output_schema["anyOf"][0]["properties"])
    assert tool.input_schema["required"] == ["models"]
    assert failed.is_error
    text = failed.content[0].text
    assert text.startswith("ANTHROPIC_API_ERROR: every model failed: claude-sonnet-4-5: ")
    assert [a["model"] for a in failed.structured_content["attempts"]] == models
    assert not answered.is_error
    assert json.loads(answered.content[0].text) == answered.structured_content
    assert [a["content"] for a in answered.structured_content["answers"]] == ["echo: hi", "echo: hi"]
