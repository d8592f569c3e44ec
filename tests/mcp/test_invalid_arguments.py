"""Arguments that fail a tool's input schema, through the official MCP client in memory: every tool
answers an ``INVALID_REQUEST`` error result like any other failure (``INVALID_REQUEST: <field path>:
<problem>``, then the structured ``error`` object), never the SDK's raw validation text (issue 21 §5)."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from colibri_router.server import build_server

# (tool, arguments, the first line of the text after "INVALID_REQUEST: ")
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("router_call", {"prompt": "a", "surprise": 1}, "surprise: Extra inputs are not permitted"),
    ("router_call", {"prompt": 5}, "prompt: Input should be a valid string"),
    ("router_call", {"prompt": "a", "tools": [{"name": "t"}]}, "tools[0].input_schema: Field required"),
    (
        "router_call",
        {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
        "messages[0].content[0].text: Field required",
    ),
    ("router_call", {}, "give exactly one of `prompt` (a single user turn) or `messages` (a conversation)"),
    ("router_models", {"live": "maybe"}, "live: Input should be a valid boolean, unable to interpret input"),
    ("router_models", {"verbose": True}, "verbose: Extra inputs are not permitted"),
    ("router_threads", {"action": "zap"}, "action: Input should be 'list', 'get' or 'delete'"),
    ("router_usage", {"since": 3}, "since: Input should be 'today', '7d', '30d' or 'all'"),
    ("router_run", {"scenario": 4}, "scenario: Input should be a valid dictionary"),
]
TOOLS = ["router_call", "router_models", "router_threads", "router_usage", "router_run", "router_job"]


def assert_invalid_request(result: Any) -> str:
    """The error result's problem text (after the code), checked to be shaped like every other one."""
    assert result.is_error
    text = result.content[0].text
    assert "pydantic" not in text and "Error executing tool" not in text and "input_value" not in text
    first, second = text.split("\n")
    assert first.startswith("INVALID_REQUEST: ")
    assert json.loads(second) == result.structured_content
    error = result.structured_content["error"]
    assert (error["code"], error["kind"], error["retryable"]) == ("INVALID_REQUEST", "INVALID_REQUEST", False)
    assert error["message"] == first.removeprefix("INVALID_REQUEST: ")
    return str(error["message"])


@pytest.mark.parametrize(("tool", "arguments", "problem"), CASES)
async def test_arguments_failing_the_schema_are_an_invalid_request_result(
    tool: str, arguments: dict[str, Any], problem: str
) -> None:
    async with Client(build_server()) as client:
        bad = await client.call_tool(tool, arguments)
        good = await client.call_tool("router_models", {})

    assert assert_invalid_request(bad) == problem
    assert not good.is_error  # the server keeps serving


async def test_a_union_field_names_each_shape_it_accepts_once() -> None:
    async with Client(build_server()) as client:
        result = await client.call_tool("router_call", {"messages": [{"role": "user", "content": 5}]})

    message = assert_invalid_request(result)
    assert message.startswith("messages[0].content: ")
    assert "valid string" in message and "valid list" in message


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tool=st.sampled_from(TOOLS),
    field=st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12).map(lambda name: f"x_{name}"),
    value=st.one_of(st.integers(), st.text(max_size=8), st.booleans(), st.none()),
)
async def test_any_unknown_field_on_any_tool_is_named(tool: str, field: str, value: Any) -> None:
    arguments: dict[str, Any] = {field: value}
    if tool == "router_call":
        arguments["prompt"] = "hi"
    async with Client(build_server()) as client:
        result = await client.call_tool(tool, arguments)

    assert f"{field}: Extra inputs are not permitted" in assert_invalid_request(result)


async def test_the_errors_pages_example_is_what_the_tool_answers() -> None:
    errors_page = " ".join((Path(__file__).parents[2] / "docs" / "errors.md").read_text().split())
    async with Client(build_server()) as client:
        result = await client.call_tool("router_call", {"prompt": "a", "tools": [{"name": "t"}]})

    assert f"`INVALID_REQUEST: {assert_invalid_request(result)}`" in errors_page
