"""Whatever a client sends, the fake answers: validators return problems instead of raising, and every
route answers any JSON with a 2xx echo or a 4xx in its service's shape, recording a violation for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fake_upstream import (
    OPENAI_HOSTS,
    FakeUpstream,
    IssuedParts,
    IssuedThinking,
    Problem,
    validate_anthropic_request,
    validate_cohere_request,
    validate_gemini_request,
    validate_ollama_request,
    validate_openai_request,
)
from fake_wire import ALL_ROUTES, chat_url, headers_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
KEYS = ["model", "messages", "contents", "role", "content", "parts", "tool_calls", "tool_call_id", "id", "function",
        "name", "arguments", "functionCall", "functionResponse", "response", "args", "thoughtSignature", "text", "type",
        "tool_use_id", "tool_choice", "toolConfig", "functionCallingConfig", "mode", "tools", "thinking", "stream",
        "options", "num_ctx", "max_tokens", "temperature", "tool_name", "signature", "stream_options"]  # fmt: skip
# Bodies shaped like requests: the validators' field names at every level, with any values under them.
WORDS = ["user", "assistant", "tool", "model", "system", "text", "thinking", "tool_use", "tool_result", "enabled",
         "function", "AUTO", "ANY", "REQUIRED", "functions.read:0", "read", "abcDEF123",
         "skip_thought_signature_validator"]  # fmt: skip
request_like = st.recursive(
    scalars | st.sampled_from(WORDS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=20,
)
bodies = st.one_of(json_values, request_like)


@settings(max_examples=300)
@given(body=bodies, host=st.sampled_from(sorted(OPENAI_HOSTS)))
def test_openai_wire_validators_never_raise(body: Any, host: str) -> None:
    assert all(isinstance(p, Problem) for p in validate_openai_request(body, {}, host=host))


@settings(max_examples=300)
@given(body=bodies)
def test_other_validators_never_raise(body: Any) -> None:
    checks = [
        validate_anthropic_request(body, {}, issued=IssuedThinking({"s": "t"})),
        validate_gemini_request(body, {}, model="gemini-3.5-flash", issued=IssuedParts()),
        validate_cohere_request(body, {}),
        validate_ollama_request(body, thinking_models={"qwen3"}),
    ]
    assert all(isinstance(p, Problem) for problems in checks for p in problems)


@pytest.fixture(scope="module")
def shared_fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies, route=st.sampled_from(ALL_ROUTES), stream=st.booleans())
def test_every_route_answers_any_json(shared_fake: FakeUpstream, body: Any, route: str, stream: bool) -> None:
    shared_fake.reset()
    with httpx.Client(timeout=5) as client:
        response = client.post(chat_url(shared_fake, route, stream=stream), json=body, headers=headers_for(route))
        response.read()
    assert response.status_code < 500
    refused = [v for v in shared_fake.violations if "silently" not in v and "alt=sse" not in v]
    assert (response.status_code >= 400) == bool(refused)
