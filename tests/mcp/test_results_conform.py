"""Every result of every tool conforms to the output schema tools/list declares for it, errors included
(issue 31 §1): the official TypeScript client (Gemini CLI's) checks error results too, and answers a
non-conforming one with -32602 instead of handing our error to the model.

Each tool's service is made to fail with each kind of error (and with an unexpected exception, which
the tool answers as INTERNAL_ERROR), through the official client in memory; the result is checked
with ``jsonschema`` against the schema the client listed. (tests/conftest.py checks every other
result the suite receives the same way.)
"""

from __future__ import annotations

import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.types import CallToolResult
from result_schemas import NonConformingResult, check

from colibri_router.errors import (
    ApiError,
    ColibriError,
    ConfigError,
    CostCapError,
    DeadlineError,
    InvalidRequestError,
    KimiApiError,
    Kind,
)
from colibri_router.server import build_server, error_result
from colibri_router.server.schemas import published
from colibri_router.store.errors import StoreError

# Each tool, the module and function its result comes from, and arguments its model accepts.
SERVICES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "router_call": ("colibri_router.call.service", "serve", {"prompt": "hi"}),
    "router_ask_many": ("colibri_router.ask_many.service", "ask_many", {"prompt": "hi", "models": ["a", "b"]}),
    "router_models": ("colibri_router.catalog.service", "list_models", {}),
    "router_threads": ("colibri_router.history.service", "threads", {}),
    "router_usage": ("colibri_router.history.service", "usage", {}),
    "router_run": ("colibri_router.testing.service", "run_for_tool", {"scenario": {"colibri": 1}}),
}
ATTEMPTS = (
    {
        "provider": "kimi",
        "model": "kimi-k2",
        "outcome": "KIMI_RETRIES_EXHAUSTED",
        "kind": "RATE_LIMITED",
        "latency_ms": 9,
    },
    {
        "provider": "claude",
        "model": "claude-sonnet-4-5",
        "outcome": "ANTHROPIC_API_ERROR",
        "kind": None,
        "latency_ms": 3,
    },
)


def _failures() -> list[tuple[str, BaseException]]:
    """(name, what the service raises): every error class, every kind, with and without attempts."""
    exhausted = KimiApiError("slow down", status=429, retryable=True, retry_after=2.5, kind="RATE_LIMITED").exhausted(4)
    exhausted.attempts = ATTEMPTS
    failures: list[tuple[str, BaseException]] = [
        ("invalid-request", InvalidRequestError("`tool_choice` names no tool in `tools`")),
        ("config", ConfigError("COLIBRI_TIMEOUT_S=abc is not a number")),
        ("budget", CostCapError("the call's worst case ($0.40) is above max_cost_usd ($0.01)")),
        ("timeout", DeadlineError("the call's deadline ran out").about("kimi", "kimi-k2")),
        ("store", StoreError("postgresql://db/colibri", OSError("connection refused"))),
        ("exhausted-with-attempts", exhausted),
        ("unexpected", RuntimeError("a bug")),
    ]
    for kind in typing.get_args(Kind):
        failures.append((f"kind-{kind}", ApiError(f"failed: {kind}", status=500, kind=kind).about("claude", None)))
    return failures


FAILURES = _failures()


def _listed_schema(listed: list[Any], tool: str) -> dict[str, Any]:
    schema = next(item.output_schema for item in listed if item.name == tool)
    assert schema is not None, f"{tool} declares no output schema"
    return dict(schema)


@pytest.mark.parametrize("tool", sorted(SERVICES))
@pytest.mark.parametrize(("name", "failure"), FAILURES, ids=[name for name, _ in FAILURES])
async def test_every_error_of_every_tool_conforms_to_its_output_schema(
    tool: str, name: str, failure: BaseException, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, function, arguments = SERVICES[tool]

    async def fail(*_: Any, **__: Any) -> Any:
        raise failure

    monkeypatch.setattr(f"{module}.{function}", fail)
    async with Client(build_server()) as client:
        listed = (await client.list_tools()).tools
        result = await client.call_tool(tool, arguments)

    assert result.is_error
    structured = result.structured_content or {}
    errors = list(Draft202012Validator(_listed_schema(listed, tool)).iter_errors(structured))
    assert errors == [], (tool, name, [error.message for error in errors])
    expected = "INTERNAL_ERROR" if isinstance(failure, RuntimeError) else getattr(failure, "code", None)
    assert structured["error"]["code"] == expected
    assert result.content[0].text.startswith(f"{expected}: ")  # type: ignore[union-attr]
    assert ("attempts" in structured) == (name == "exhausted-with-attempts")


async def test_arguments_failing_the_model_give_a_conforming_error_on_every_tool() -> None:
    async with Client(build_server()) as client:
        listed = (await client.list_tools()).tools
        for tool in SERVICES:
            result = await client.call_tool(tool, {"surprise": 1})
            assert result.is_error and (result.structured_content or {})["error"]["code"] == "INVALID_REQUEST"
            assert Draft202012Validator(_listed_schema(listed, tool)).is_valid(result.structured_content)


def _error(code: str, kind: str, message: str, status: int | None, retry_after: float | None) -> ColibriError:
    error = ColibriError(message)
    error.code, error.kind, error.status, error.retry_after = code, kind, status, retry_after  # type: ignore[assignment]
    return error


ATTEMPT = st.fixed_dictionaries(
    {
        "provider": st.text(max_size=8),
        "model": st.text(max_size=8),
        "outcome": st.text(max_size=8),
        "kind": st.none() | st.sampled_from(typing.get_args(Kind)),
        "latency_ms": st.integers(0, 10**6),
    }
)


@settings(max_examples=60, deadline=None)
@given(
    code=st.text(min_size=1, max_size=20),
    kind=st.sampled_from(typing.get_args(Kind)),
    message=st.text(max_size=60),
    status=st.none() | st.integers(100, 599),
    retry_after=st.none() | st.floats(0, 60),
    attempts=st.lists(ATTEMPT, max_size=3),
)
def test_any_error_result_conforms_to_every_tools_published_schema(
    code: str, kind: str, message: str, status: int | None, retry_after: float | None, attempts: list[dict[str, Any]]
) -> None:
    error = _error(code, kind, message, status, retry_after)
    error.attempts = tuple(attempts)
    result = error_result(error)
    for tool, schemas in published().items():
        check(tool, schemas["output"], result)  # raises when the schema rejects it


def test_the_check_refuses_an_error_a_success_only_schema_rejects() -> None:
    """What Gemini CLI met before: router_call's success object alone as its output schema."""
    success_only = published()["router_call"]["output"]["anyOf"][0]
    result = error_result(InvalidRequestError("bad"))
    with pytest.raises(NonConformingResult, match="an error its output schema rejects"):
        check("router_call", success_only, result)
    check("router_call", published()["router_call"]["output"], result)
    assert isinstance(result, CallToolResult)


def test_every_output_schema_has_an_object_root_and_both_shapes() -> None:
    for tool, schemas in published().items():
        output = schemas["output"]
        assert output["type"] == "object", tool
        *successes, error = output["anyOf"]  # a long tool's job handle among the successes (docs/jobs.md)
        assert successes, tool
        assert all(success["type"] == "object" for success in successes), tool
        assert error["required"] == ["error"], tool
        assert error["properties"]["error"]["type"] == "object", tool
