"""router_call's fallbacks, aliases and cost, through the real router against a scripted transport."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from colibri_router.errors import ColibriError
from colibri_router.router import route
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput

Handler = Callable[[httpx.Request], httpx.Response]
OPENAI_QUOTA = {
    "error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}
}


def anthropic_answer(text: str, model: str = "claude-sonnet-4-5") -> httpx.Response:
    body = {
        "type": "message",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1000, "output_tokens": 100, "cache_read_input_tokens": 4000},
    }
    return httpx.Response(200, json=body)


@pytest.fixture(autouse=True)
def providers(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, url in {
        "OPENAI": "http://openai.test/v1",
        "ANTHROPIC": "http://claude.test",
        "MISTRAL": "http://mistral.test/v1",
    }.items():
        monkeypatch.setenv(f"{name}_API_KEY", f"{name.lower()}-key-123456")
        monkeypatch.setenv(f"{name}_BASE_URL", url)


async def call(handlers: dict[str, Handler], **args: Any) -> tuple[Any, list[str]]:
    seen: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        return handlers[request.url.host](request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as client:
        call = call_from(RouterCallInput.model_validate({"prompt": "hi", **args}))
        result = (await route(call, client=client)).result
    return result, seen


async def test_quota_on_openai_falls_to_claude_and_says_so() -> None:
    result, seen = await call(
        {
            "openai.test": lambda _: httpx.Response(429, json=OPENAI_QUOTA),
            "claude.test": lambda _: anthropic_answer("from claude"),
        },
        model="gpt-4.1",
        fallback=["claude-sonnet-4-5"],
    )
    assert seen == ["openai.test", "claude.test"]
    assert (result.provider, result.content) == ("claude", "from claude")
    assert [(a.provider, a.outcome, a.kind) for a in result.attempts] == [
        ("openai", "OPENAI_API_ERROR", "QUOTA_EXCEEDED"),
        ("claude", "ok", None),
    ]


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (404, {"error": {"message": "The model does not exist", "code": "model_not_found"}}, "MODEL_NOT_FOUND"),
        (400, {"error": {"message": "too long", "code": "context_length_exceeded"}}, "CONTEXT_LENGTH"),
        (503, {"error": {"message": "overloaded", "type": "server_error"}}, "PROVIDER_ERROR"),
        (429, {"error": {"message": "slow down", "code": "rate_limit_exceeded"}}, "RATE_LIMITED"),
    ],
)
async def test_failures_another_model_may_not_have_fall_through(status: int, body: Any, kind: str) -> None:
    result, _ = await call(
        {"openai.test": lambda _: httpx.Response(status, json=body), "claude.test": lambda _: anthropic_answer("ok")},
        model="gpt-4.1",
        fallback=["sonnet"],
    )
    assert result.attempts[0].kind == kind
    assert result.provider == "claude"


async def test_a_network_error_falls_through() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    result, _ = await call(
        {"openai.test": refuse, "claude.test": lambda _: anthropic_answer("ok")}, model="gpt-4.1", fallback=["sonnet"]
    )
    assert result.attempts[0].kind == "NETWORK_ERROR"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (400, {"error": {"message": "bad", "type": "invalid_request_error"}}, "INVALID_REQUEST"),
        (401, {"error": {"message": "Incorrect API key", "code": "invalid_api_key"}}, "AUTH_FAILED"),
        (400, {"error": {"message": "flagged", "code": "content_filter"}}, "CONTENT_FILTERED"),
    ],
)
async def test_failures_the_next_model_would_share_do_not_fall(status: int, body: Any, kind: str) -> None:
    claude_asked = []
    with pytest.raises(ColibriError) as caught:
        await call(
            {
                "openai.test": lambda _: httpx.Response(status, json=body),
                "claude.test": lambda r: claude_asked.append(r) or anthropic_answer("x"),
            },
            model="gpt-4.1",
            fallback=["sonnet"],
        )
    assert caught.value.kind == kind
    assert claude_asked == []
    assert [a["outcome"] for a in caught.value.attempts] == ["OPENAI_API_ERROR"]


async def test_the_last_failure_is_reported_with_every_attempt() -> None:
    with pytest.raises(ColibriError) as caught:
        await call(
            {
                "openai.test": lambda _: httpx.Response(429, json=OPENAI_QUOTA),
                "mistral.test": lambda _: httpx.Response(402, json={"message": "no credit"}),
            },
            model="gpt-4.1",
            fallback=["mistral-large-latest"],
        )
    error = caught.value
    assert (error.code, error.provider, error.model) == ("MISTRAL_API_ERROR", "mistral", "mistral-large-latest")
    assert [(a["provider"], a["kind"]) for a in error.attempts] == [
        ("openai", "QUOTA_EXCEEDED"),
        ("mistral", "QUOTA_EXCEEDED"),
    ]


async def test_a_missing_key_on_the_fallback_stops_there() -> None:
    with pytest.raises(ColibriError) as caught:
        await call(
            {"openai.test": lambda _: httpx.Response(429, json=OPENAI_QUOTA)},
            model="gpt-4.1",
            fallback=["deepseek-chat"],
        )
    assert caught.value.code == "DEEPSEEK_CONFIG_ERROR"
    assert [a["kind"] for a in caught.value.attempts] == ["QUOTA_EXCEEDED", "CONFIG_ERROR"]


async def test_the_config_files_chain_applies_when_the_call_gives_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[aliases]\nbig = "claude:claude-opus-4-1"\n\n[fallback]\nmodels = ["big"]\n')
    monkeypatch.setenv("COLIBRI_CONFIG", str(config))
    result, _ = await call(
        {
            "openai.test": lambda _: httpx.Response(429, json=OPENAI_QUOTA),
            "claude.test": lambda r: anthropic_answer("ok", json.loads(r.content)["model"]),
        },
        model="gpt-4.1",
    )
    assert (result.provider, result.model) == ("claude", "claude-opus-4-1")
    # An empty `fallback` is no fallback, not the config file's chain.
    with pytest.raises(ColibriError) as caught:
        await call({"openai.test": lambda _: httpx.Response(429, json=OPENAI_QUOTA)}, model="gpt-4.1", fallback=[])
    assert [a["provider"] for a in caught.value.attempts] == ["openai"]


async def test_aliases_resolve_and_the_result_names_the_model() -> None:
    result, _ = await call(
        {"claude.test": lambda r: anthropic_answer("hi", json.loads(r.content)["model"])}, model="haiku"
    )
    assert (result.provider, result.model) == ("claude", "claude-haiku-4-5")


async def test_an_unknown_model_gets_did_you_mean() -> None:
    missing = {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-sonet-4-5"}}
    with pytest.raises(ColibriError) as caught:
        await call({"claude.test": lambda _: httpx.Response(404, json=missing)}, model="claude-sonet-4-5")
    assert caught.value.kind == "MODEL_NOT_FOUND"
    assert "did you mean: claude-sonnet-4-5" in caught.value.message


async def test_usage_counts_cached_input_and_the_cost_prices_each_kind_of_token() -> None:
    result, _ = await call({"claude.test": lambda _: anthropic_answer("ok")}, model="claude-sonnet-4-5")
    assert (result.prompt_tokens, result.cached_tokens, result.completion_tokens) == (5000, 4000, 100)
    # claude-sonnet-4-5: $3/M input, $0.30/M cache read, $15/M output.
    assert result.cost_usd == pytest.approx(1000 * 3e-6 + 4000 * 0.3e-6 + 100 * 15e-6)
    assert result.price_source is not None and result.price_source.startswith("genai-prices")


async def test_local_providers_cost_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_BASE_URL", "http://vllm.test/v1")
    chunk = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 1},
    }
    result, _ = await call({"vllm.test": lambda _: httpx.Response(200, json=chunk)}, model="vllm:my-model")
    assert (result.cost_usd, result.price_source) == (0.0, "local")
