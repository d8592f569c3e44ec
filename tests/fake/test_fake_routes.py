"""Every route of the fake: addresses, keys, model lists, echo answers, error shapes, reset."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fake_upstream import (
    FakeUpstream,
    OpenAIChatRoute,
    error,
    gemini_tool_calls,
    kimi_text,
    raw_body,
)
from fake_wire import (
    ALL_ROUTES,
    ANTHROPIC_WIRE,
    KEYLESS,
    OPENAI_WIRE,
    chat_url,
    headers_for,
    models_url,
    post,
    simple_body,
)


@pytest.mark.parametrize(
    ("route", "base_path", "chat_path"),
    [
        *((name, f"/{name}/v1", f"/{name}/v1/chat/completions") for name in OPENAI_WIRE),
        ("anthropic", "/anthropic", "/anthropic/v1/messages"),
        ("kimi-anthropic", "/kimi-anthropic", "/kimi-anthropic/v1/messages"),
        ("gemini", "/gemini/v1beta", "/gemini/v1beta/models/gemini-3.5-flash:generateContent"),
        ("cohere", "/cohere", "/cohere/v2/chat"),
        ("ollama", "/ollama", "/ollama/api/chat"),
    ],
)
def test_base_urls_and_chat_endpoints(fake_upstream: FakeUpstream, route: str, base_path: str, chat_path: str) -> None:
    assert fake_upstream.base_url(route) == fake_upstream.url + base_path
    assert chat_url(fake_upstream, route) == fake_upstream.url + chat_path
    assert fake_upstream.route(route).name == route


def test_routes_by_name_and_the_typed_shortcuts(fake_upstream: FakeUpstream) -> None:
    assert tuple(fake_upstream.routes) == ALL_ROUTES
    assert fake_upstream.route("kimi") is fake_upstream.kimi
    assert fake_upstream.route("anthropic") is fake_upstream.anthropic
    assert (fake_upstream.gemini.name, fake_upstream.cohere.name, fake_upstream.ollama.name) == (
        "gemini",
        "cohere",
        "ollama",
    )
    assert isinstance(fake_upstream.route("groq"), OpenAIChatRoute)
    assert fake_upstream.kimi_base_url == fake_upstream.base_url("kimi")
    assert fake_upstream.anthropic_base_url == fake_upstream.base_url("anthropic")
    with pytest.raises(KeyError, match="no route 'bedrock'; routes: kimi, openai"):
        fake_upstream.route("bedrock")


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_default_reply_echoes_in_the_route_shape(fake_upstream: FakeUpstream, client: httpx.Client, route: str) -> None:
    body = simple_body(route, "ping", **({"stream": False} if route == "ollama" else {}))  # Ollama streams by default
    response = post(client, fake_upstream, route, body)
    assert response.status_code == 200, response.text
    answer = response.json()
    if route in OPENAI_WIRE:
        text = answer["choices"][0]["message"]["content"]
    elif route in ANTHROPIC_WIRE:
        text = answer["content"][0]["text"]
    elif route == "gemini":
        text = answer["candidates"][0]["content"]["parts"][0]["text"]
    elif route == "cohere":
        text = answer["message"]["content"][0]["text"]
    else:
        text = answer["message"]["content"]
    assert text == "echo: ping"
    assert fake_upstream.violations == []
    assert [r.body for r in fake_upstream.route(route).requests] == [body]


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_a_missing_key_is_refused_where_the_service_needs_one(
    fake_upstream: FakeUpstream, client: httpx.Client, route: str
) -> None:
    fake_upstream.route(route).enqueue(error(500, message="never sent"))
    headers = {"anthropic-version": "2023-06-01"} if route in ANTHROPIC_WIRE else {}
    response = client.post(chat_url(fake_upstream, route), json=simple_body(route), headers=headers)
    if route in KEYLESS:
        assert response.status_code == 500  # answered: the scripted reply was used
        assert fake_upstream.violations == []
        return
    assert response.status_code == (403 if route == "gemini" else 401)
    assert len(fake_upstream.violations) == 1
    assert fake_upstream.violations[0].startswith(f"{route}: ")
    assert post(client, fake_upstream, route, simple_body(route)).status_code == 500  # the script was kept


@pytest.mark.parametrize("route", KEYLESS)
def test_keyless_services_accept_a_bearer_too(fake_upstream: FakeUpstream, client: httpx.Client, route: str) -> None:
    url = chat_url(fake_upstream, route)
    response = client.post(url, json=simple_body(route), headers={"Authorization": "Bearer anything"})
    assert response.status_code == 200
    assert fake_upstream.violations == []


def test_gemini_takes_the_key_as_a_query_parameter_too(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    response = client.post(chat_url(fake_upstream, "gemini") + "?key=g-test", json=simple_body("gemini"))
    assert response.status_code == 200
    assert fake_upstream.gemini.requests[0].query_params == {"key": ["g-test"]}


# --- model lists -----------------------------------------------------------------------------------------


def listed_models(route: str, body: Any) -> list[str]:
    if route in OPENAI_WIRE:
        assert body["object"] == "list"
        return [m["id"] for m in body["data"]]
    if route in ANTHROPIC_WIRE:
        return [m["id"] for m in body["data"]]
    if route == "gemini":
        return [m["name"].removeprefix("models/") for m in body["models"] if m["name"].startswith("models/")]
    return [m["name"] for m in body["models"]]


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_model_lists_answer_in_the_service_shape_and_are_settable(
    fake_upstream: FakeUpstream, client: httpx.Client, route: str
) -> None:
    url, headers = models_url(fake_upstream, route), headers_for(route)
    first = client.get(url, headers=headers)
    assert first.status_code == 200
    assert listed_models(route, first.json()) == fake_upstream.route(route).models != []

    fake_upstream.route(route).models = ["model-a", "model-b"]
    assert listed_models(route, client.get(url, headers=headers).json()) == ["model-a", "model-b"]
    assert len(fake_upstream.route(route).model_list_requests) == 2
    assert fake_upstream.route(route).requests == []  # chat requests are counted apart
    assert [r.endpoint for r in fake_upstream.requests] == ["models", "models"]


@pytest.mark.parametrize("route", ["openai", "anthropic", "gemini", "cohere", "ollama"])
def test_model_lists_can_be_scripted_to_fail(fake_upstream: FakeUpstream, client: httpx.Client, route: str) -> None:
    fake_upstream.route(route).enqueue_model_list(error(503, message="down"), raw_body(200, b"<html>"))
    url, headers = models_url(fake_upstream, route), headers_for(route)
    assert client.get(url, headers=headers).status_code == 503
    assert client.get(url, headers=headers).text == "<html>"
    assert client.get(url, headers=headers).status_code == 200
    assert post(client, fake_upstream, route, simple_body(route)).status_code == 200  # chat queue untouched


@pytest.mark.parametrize("route", ["openai", "anthropic", "gemini", "cohere"])
def test_model_lists_need_the_key_too(fake_upstream: FakeUpstream, client: httpx.Client, route: str) -> None:
    assert client.get(models_url(fake_upstream, route)).status_code in (401, 403)
    assert len(fake_upstream.violations) == 1


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/openai/v1/completions"),
        ("GET", "/openai/v1/chat/completions"),
        ("POST", "/gemini/v1beta/models/gemini-3.5-flash:countTokens"),
        ("POST", "/cohere/v1/chat"),
        ("POST", "/ollama/api/generate"),
    ],
)
def test_an_unknown_path_under_a_route_is_a_404(
    fake_upstream: FakeUpstream, client: httpx.Client, method: str, path: str
) -> None:
    assert client.request(method, fake_upstream.url + path, json={}).status_code == 404
    assert fake_upstream.violations == [f"unknown route {method} {path}"]
    assert fake_upstream.requests[0].route == ""


# --- error shapes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "reply", "expected"),
    [
        (
            "openai",
            error(429, message="m", code="rate_limit_exceeded"),
            {"error": {"message": "m", "type": "requests", "param": None, "code": "rate_limit_exceeded"}},
        ),
        (
            "kimi",
            error(400, message="m", error_type="content_filter"),
            {"error": {"type": "content_filter", "message": "m"}},
        ),
        (
            "mistral",
            error(429, message="Rate limit exceeded", error_type="rate_limited", code="1300"),
            {
                "object": "error",
                "message": "Rate limit exceeded",
                "type": "rate_limited",
                "param": None,
                "code": "1300",
            },
        ),
        (
            "openrouter",
            error(
                400,
                message="Provider returned error",
                extra={"metadata": {"raw": "{}", "provider_name": "Moonshot AI"}},
            ),
            {
                "error": {
                    "code": 400,
                    "message": "Provider returned error",
                    "metadata": {"raw": "{}", "provider_name": "Moonshot AI"},
                }
            },
        ),
        (
            "vllm",
            error(400, message="m", error_type="BadRequestError", variant="flat"),
            {"object": "error", "message": "m", "type": "BadRequestError", "param": None, "code": 400},
        ),
        (
            "vllm",
            error(400, message="m", error_type="BadRequestError"),
            {"error": {"message": "m", "type": "BadRequestError", "param": None, "code": None}},
        ),
        (
            "groq",
            error(400, message="Failed", code="tool_use_failed", extra={"failed_generation": "<x>"}),
            {
                "error": {
                    "message": "Failed",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "tool_use_failed",
                    "failed_generation": "<x>",
                }
            },
        ),
        (
            "anthropic",
            error(529, message="m"),
            {"type": "error", "error": {"type": "overloaded_error", "message": "m"}, "request_id": "req_fake"},
        ),
        (
            "gemini",
            error(
                429,
                message="m",
                extra={"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "47s"}]},
            ),
            {
                "error": {
                    "code": 429,
                    "message": "m",
                    "status": "RESOURCE_EXHAUSTED",
                    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "47s"}],
                }
            },
        ),
        (
            "gemini",
            error(503, message="The model is overloaded.", variant="array"),
            [{"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}],
        ),
        (
            "cohere",
            error(429, message="trial key limit", extra={"id": "r1"}),
            {"message": "trial key limit", "id": "r1"},
        ),
        ("ollama", error(404, message="model 'x' not found"), {"error": "model 'x' not found"}),
    ],
)
def test_errors_are_rendered_in_the_route_shape(
    fake_upstream: FakeUpstream, client: httpx.Client, route: str, reply: Any, expected: Any
) -> None:
    fake_upstream.route(route).enqueue(reply)
    response = post(client, fake_upstream, route, simple_body(route))
    assert response.status_code == reply.status
    assert response.json() == expected


@pytest.mark.parametrize(
    ("route", "variant"), [("openai", "flat"), ("vllm", "array"), ("gemini", "flat"), ("ollama", "x")]
)
def test_an_unknown_error_variant_fails_when_enqueued(fake_upstream: FakeUpstream, route: str, variant: str) -> None:
    with pytest.raises(ValueError, match="variant"):
        fake_upstream.route(route).enqueue(error(400, message="m", variant=variant))


def test_unknown_statuses_get_a_reason_phrase(fake_upstream: FakeUpstream, client: httpx.Client) -> None:
    fake_upstream.route("groq").enqueue(error(498, message="capacity", code="capacity_exceeded"))
    response = post(client, fake_upstream, "groq", simple_body("groq"))
    assert (response.status_code, response.reason_phrase) == (498, "Capacity Exceeded")


# --- reset -----------------------------------------------------------------------------------------------


def test_reset_forgets_scripts_lists_and_issued_values_but_keeps_settings(
    fake_upstream: FakeUpstream, client: httpx.Client
) -> None:
    fake_upstream.gemini.enqueue(gemini_tool_calls([("read", {})], ids=True, signatures=True))
    post(client, fake_upstream, "gemini", simple_body("gemini"))
    assert fake_upstream.gemini.issued.calls
    fake_upstream.kimi.enqueue(kimi_text("never sent"))
    fake_upstream.route("openai").enqueue_model_list(error(500, message="never sent"))
    fake_upstream.route("openai").models = ["only-this"]
    fake_upstream.route("openrouter").strict_ids = False
    fake_upstream.reset()
    assert fake_upstream.gemini.issued.calls == {} and fake_upstream.gemini.issued.signatures == {}
    assert fake_upstream.requests == fake_upstream.gemini.requests == []
    assert (
        post(client, fake_upstream, "kimi", simple_body("kimi", "c")).json()["choices"][0]["message"]["content"]
        == "echo: c"
    )
    listed = client.get(models_url(fake_upstream, "openai"), headers=headers_for("openai"))
    assert [m["id"] for m in listed.json()["data"]] == ["only-this"]
    assert fake_upstream.route("openrouter").strict_ids is False
