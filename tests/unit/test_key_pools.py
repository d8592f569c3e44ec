"""Several keys per provider (docs/keys.md): rotation, set-aside rules and fingerprints, through the real
router against the strict fake upstream answering per key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    error,
    openai_error_event,
    openai_sse_events,
    openai_text,
    raw_stream,
    request_key,
)

from colibri_router import observability
from colibri_router.engine.keys import fingerprint, reset_pools
from colibri_router.errors import ColibriError
from colibri_router.router import route
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput

pytestmark = pytest.mark.usefixtures("fresh_key_pools")  # a pool is per process: each test starts anew

# Keys of no provider's shape: only the router's knowledge of its own keys can keep them out of text.
K1, K2, K3 = "pool-key-alpha-5f2c9e41", "pool-key-bravo-0b7d3a62", "pool-key-charlie-9e1f4c03"
GEMINI_DAILY_QUOTA = {
    "details": [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
        }
    ]
}
GEMINI_BAD_KEY = {
    "details": [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}
    ]
}


class Recorder(observability.Sink):
    """Which upstream requests were retried and which keys set aside, as the observability hooks say."""

    def __init__(self) -> None:
        self.retries: list[str] = []
        self.set_aside: list[tuple[str, str, str]] = []
        self.attempt_keys: list[str | None] = []

    def retried(self, provider: str, model: str, kind: str) -> None:
        self.retries.append(kind)

    def key_set_aside(self, provider: str, key: str, reason: str) -> None:
        self.set_aside.append((provider, key, reason))

    def attempt(self, provider: str, model: str, key: str | None = None) -> observability.Attempt:
        self.attempt_keys.append(key)
        return observability.Attempt()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    sink = Recorder()
    observability.install(sink)
    yield sink
    observability.uninstall(sink)


@pytest.fixture
def gemini(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    monkeypatch.setenv("GEMINI_API_KEY", f"{K1},{K2}, {K3}")  # blanks around a key are not part of it
    monkeypatch.setenv("GEMINI_BASE_URL", fake_upstream.base_url("gemini"))
    return fake_upstream


async def call(**args: Any) -> Any:
    return (
        await route(call_from(RouterCallInput.model_validate({"prompt": "hi", "model": "gemini-3.5-flash", **args})))
    ).result


def keys_sent(fake: FakeUpstream, name: str = "gemini") -> list[str]:
    return [request_key(r) for r in fake.route(name).requests]


def fp(key: str, provider: str = "gemini") -> str:
    return fingerprint(provider, key)


async def test_done_when_k1_rate_limited_and_k2_out_of_quota_answer_from_k3_at_once(
    gemini: FakeUpstream, recorder: Recorder
) -> None:
    gemini.gemini.enqueue_for_key(K1, error(429, message="slow down", headers={"Retry-After": "20"}))
    gemini.gemini.enqueue_for_key(K2, error(429, message="You exceeded your current quota.", extra=GEMINI_DAILY_QUOTA))

    # A 20 s wait could not start within a 5 s deadline: the call would fail had it waited.
    result = await call(timeout_s=5)

    assert result.content == "echo: hi"
    assert keys_sent(gemini) == [K1, K2, K3]
    assert recorder.retries == []  # moving to the next key is not a retry
    assert [w for w in result.warnings if w.startswith("key ")] == [
        f"key {fp(K1)} rate-limited: set aside for 20 s",
        f"key {fp(K2)} out of quota: set aside for 60 min",
    ]
    assert [(a.provider, a.outcome, a.key) for a in result.attempts] == [("gemini", "ok", fp(K3))]
    assert recorder.set_aside == [("gemini", fp(K1), "rate_limited"), ("gemini", fp(K2), "out_of_quota")]
    assert recorder.attempt_keys == [fp(K1), fp(K2), fp(K3)]
    assert gemini.violations == []


async def test_calls_take_the_keys_in_turn(gemini: FakeUpstream) -> None:
    for _ in range(4):
        await call()

    assert keys_sent(gemini) == [K1, K2, K3, K1]


async def test_a_rate_limited_key_is_skipped_by_the_next_calls_until_it_returns(gemini: FakeUpstream) -> None:
    gemini.gemini.enqueue_for_key(K1, error(429, message="slow down"))  # no Retry-After: the backoff (1 s)

    first = await call()
    await call()
    await call()

    assert keys_sent(gemini) == [K1, K2, K3, K2]
    assert f"key {fp(K1)} rate-limited: set aside for 1.0 s" in first.warnings


@pytest.mark.parametrize(
    ("route_name", "variable", "model", "quota"),
    [
        (
            "openai",
            "OPENAI_API_KEY",
            "gpt-4.1",
            error(
                429,
                message="You exceeded your current quota",
                error_type="insufficient_quota",
                code="insufficient_quota",
            ),
        ),
        ("gemini", "GEMINI_API_KEY", "gemini-3.5-flash", error(429, message="quota", extra=GEMINI_DAILY_QUOTA)),
        ("openrouter", "OPENROUTER_API_KEY", "openrouter:openai/gpt-4.1", error(402, message="Insufficient credits")),
        ("cohere", "CO_API_KEY", "cohere:command-a-03-2025", error(402, message="billing limit reached")),
    ],
)
async def test_a_key_out_of_quota_is_set_aside_for_an_hour_in_each_providers_shape(
    fake_upstream: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    route_name: str,
    variable: str,
    model: str,
    quota: Any,
) -> None:
    provider = route_name
    monkeypatch.setenv(variable, f"{K1},{K2}")
    monkeypatch.setenv(f"{route_name.upper()}_BASE_URL", fake_upstream.base_url(route_name))
    fake_upstream.route(route_name).enqueue_for_key(K1, quota)

    result = await call(model=model)
    await call(model=model)

    assert keys_sent(fake_upstream, route_name) == [K1, K2, K2]
    assert f"key {fp(K1, provider)} out of quota: set aside for 60 min" in result.warnings
    assert result.attempts[0].key == fp(K2, provider)
    assert fake_upstream.violations == []


@pytest.mark.parametrize(
    ("route_name", "variable", "model", "rejection"),
    [
        ("openai", "OPENAI_API_KEY", "gpt-4.1", error(401, message="Incorrect API key", code="invalid_api_key")),
        (
            "gemini",
            "GEMINI_API_KEY",
            "gemini-3.5-flash",
            error(400, message="API key not valid.", extra=GEMINI_BAD_KEY),
        ),
        ("gemini", "GEMINI_API_KEY", "gemini-3.5-flash", error(403, message="Permission denied")),
    ],
)
async def test_an_invalid_key_is_set_aside_until_restart(
    fake_upstream: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    route_name: str,
    variable: str,
    model: str,
    rejection: Any,
) -> None:
    monkeypatch.setenv(variable, f"{K1},{K2}")
    monkeypatch.setenv(f"{route_name.upper()}_BASE_URL", fake_upstream.base_url(route_name))
    fake_upstream.route(route_name).enqueue_for_key(K1, rejection)

    result = await call(model=model)
    for _ in range(3):
        await call(model=model)

    assert keys_sent(fake_upstream, route_name) == [K1, K2, K2, K2, K2]
    assert f"key {fp(K1, route_name)} rejected as invalid: set aside until restart" in result.warnings
    reset_pools()  # a restart
    await call(model=model)
    assert keys_sent(fake_upstream, route_name)[-1] == K1


async def test_every_key_rate_limited_fails_rate_limited_with_the_soonest_return(gemini: FakeUpstream) -> None:
    gemini.gemini.enqueue_for_key(K1, error(429, message="slow", headers={"Retry-After": "40"}))
    gemini.gemini.enqueue_for_key(K2, error(429, message="slow", headers={"Retry-After": "25"}))
    gemini.gemini.enqueue_for_key(K3, error(429, message="quota", extra=GEMINI_DAILY_QUOTA))

    with pytest.raises(ColibriError) as caught:
        await call(timeout_s=5)

    failure = caught.value
    assert failure.kind == "RATE_LIMITED"
    assert failure.retry_after is not None and 24 < failure.retry_after <= 25
    for key in (K1, K2, K3):
        assert fp(key) in failure.message
    assert [a["key"] for a in failure.attempts] == [fp(K2)]  # the key the call would come back to
    # The next call is refused without asking the provider: every key is still set aside.
    with pytest.raises(ColibriError) as again:
        await call(timeout_s=5)
    assert again.value.kind == "RATE_LIMITED"
    assert len(gemini.gemini.requests) == 3


async def test_every_key_out_of_quota_fails_quota_exceeded(gemini: FakeUpstream) -> None:
    for key in (K1, K2, K3):
        gemini.gemini.enqueue_for_key(key, error(429, message="quota", extra=GEMINI_DAILY_QUOTA))

    with pytest.raises(ColibriError) as caught:
        await call()

    assert caught.value.kind == "QUOTA_EXCEEDED"
    assert caught.value.retry_after is not None and 3590 < caught.value.retry_after <= 3600


async def test_every_key_invalid_fails_auth_failed_with_no_return(gemini: FakeUpstream) -> None:
    for key in (K1, K2, K3):
        gemini.gemini.enqueue_for_key(key, error(400, message="API key not valid.", extra=GEMINI_BAD_KEY))

    with pytest.raises(ColibriError) as caught:
        await call()

    assert (caught.value.kind, caught.value.retry_after) == ("AUTH_FAILED", None)
    assert keys_sent(gemini) == [K1, K2, K3]


async def test_a_rate_limit_waited_out_comes_back_to_the_soonest_key_as_one_retry(
    gemini: FakeUpstream, recorder: Recorder
) -> None:
    for key in (K1, K2, K3):
        gemini.gemini.enqueue_for_key(key, error(429, message="slow", headers={"Retry-After": "0.01"}))

    result = await call()

    assert result.content == "echo: hi"
    assert len(keys_sent(gemini)) == 4
    assert recorder.retries == ["RATE_LIMITED"]  # one wait, after every key had refused


async def test_a_fallback_chain_moves_on_when_the_pool_is_exhausted(
    gemini: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "openai-single-key-77aa")
    monkeypatch.setenv("OPENAI_BASE_URL", gemini.base_url("openai"))
    for key in (K1, K2, K3):
        gemini.gemini.enqueue_for_key(key, error(429, message="quota", extra=GEMINI_DAILY_QUOTA))
    gemini.route("openai").enqueue(openai_text("from openai", model="gpt-4.1"))

    result = await call(fallback=["gpt-4.1"])

    assert result.provider == "openai"
    assert [(a.provider, a.kind, a.key) for a in result.attempts] == [
        ("gemini", "QUOTA_EXCEEDED", fp(K1)),
        ("openai", None, None),  # a single key is named by no fingerprint
    ]


async def test_a_single_key_is_never_set_aside(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", K1)
    monkeypatch.setenv("GEMINI_BASE_URL", fake_upstream.base_url("gemini"))
    fake_upstream.gemini.enqueue(error(401, message="bad key"))

    with pytest.raises(ColibriError) as caught:
        await call()
    result = await call()

    assert caught.value.kind == "AUTH_FAILED"
    assert result.content == "echo: hi"  # the one key is asked again, as it always was
    assert not any(w.startswith("key ") for w in result.warnings)
    assert result.attempts[0].key is None


async def test_a_key_an_upstream_echoes_is_scrubbed_from_the_error(gemini: FakeUpstream) -> None:
    gemini.gemini.enqueue_for_key(K1, error(429, message=f"key {K1} is rate limited"))
    gemini.gemini.enqueue_for_key(K2, error(400, message=f"bad request for {K2} (and {K1})"))

    with pytest.raises(ColibriError) as caught:
        await call()

    text = json.dumps([caught.value.message, list(caught.value.attempts)])
    for key in (K1, K2, K3):
        assert key not in text
    assert fp(K1) in caught.value.message  # the key set aside on the way is named


async def test_a_config_entry_may_pool_several_key_variables(
    fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[providers.gpu-box]\n"
        'wire = "openai"\n'
        f'base_url = "{fake_upstream.base_url("vllm")}"\n'
        'api_key_env = ["GPU_BOX_KEY_A", "GPU_BOX_KEY_B"]\n'
        'models = ["box-model"]\n'
    )
    monkeypatch.setenv("COLIBRI_CONFIG", str(config))
    monkeypatch.setenv("GPU_BOX_KEY_A", f"{K1},{K2}")
    monkeypatch.setenv("GPU_BOX_KEY_B", f"{K3},{K1}")  # a key in both is one key
    fake_upstream.route("vllm").enqueue_for_key(K1, error(429, message="slow"))

    results = [await call(model="box-model") for _ in range(4)]

    assert keys_sent(fake_upstream, "vllm") == [K1, K2, K3, K2, K3]
    assert results[0].attempts[0].key == fp(K2, "gpu-box")


async def test_an_error_inside_an_answer_already_begun_goes_to_no_other_key(
    fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"{K1},{K2}")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_upstream.base_url("openai"))
    begun = openai_sse_events(openai_text("half an answer", model="gpt-4.1").body)[:2]
    fake_upstream.route("openai").enqueue_for_key(
        K1, raw_stream([*begun, openai_error_event("slow down", error_type="rate_limit_error")])
    )

    with pytest.raises(ColibriError) as caught:
        await call(model="gpt-4.1")

    assert caught.value.kind == "RATE_LIMITED"
    assert keys_sent(fake_upstream, "openai") == [K1]  # its output was billed: not sent again


async def test_after_a_retrys_wait_the_soonest_key_is_asked_even_if_still_set_aside(
    gemini: FakeUpstream, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Retry-After beyond the retry rule's 30 s cap: the wait is capped, then the soonest key is asked
    # again, as a single key would be (the retry rule's own sleep is replaced: no real 30 s wait).
    import colibri_router.router.pipeline as pipeline

    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(
        pipeline.run_completion, "__kwdefaults__", {**pipeline.run_completion.__kwdefaults__, "sleep": sleep}
    )
    for key, wait in ((K1, "50"), (K2, "40"), (K3, "45")):
        gemini.gemini.enqueue_for_key(key, error(429, message="slow", headers={"Retry-After": wait}))

    result = await call()

    assert result.content == "echo: hi"
    assert keys_sent(gemini) == [K1, K2, K3, K2]
    assert slept == [30.0] and recorder.retries == ["RATE_LIMITED"]


def test_each_key_of_a_variable_is_known_to_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    from colibri_router.redaction import redact, redact_log

    monkeypatch.setenv("GEMINI_API_KEY", f"{K1}, {K2}")
    assert redact(f"upstream said: {K2} is over quota") == "upstream said: [redacted] is over quota"
    assert K1 not in redact_log(f"sent with {K1}")


async def test_router_ask_many_says_in_an_answers_warnings_which_key_was_set_aside(gemini: FakeUpstream) -> None:
    from mcp import Client

    from colibri_router.server import build_server

    gemini.gemini.enqueue_for_key(K1, error(429, message="slow down", headers={"Retry-After": "20"}))
    async with Client(build_server()) as client:
        result = await client.call_tool(
            "router_ask_many", {"prompt": "hi", "models": ["gemini-3.5-flash", "gemini-2.5-pro"]}
        )

    answers = (result.structured_content or {})["answers"]
    assert all(answer.get("content") == "echo: hi" for answer in answers)
    said = [w for answer in answers for w in answer.get("warnings", []) if w.startswith("key ")]
    assert said == [f"key {fp(K1)} rate-limited: set aside for 20 s"]
    sent = keys_sent(gemini)
    assert len(sent) == 3 and sent.count(K1) == 1  # k1 once, then set aside for both models


async def test_the_python_api_uses_a_variables_keys_as_a_pool_and_an_explicit_key_alone(
    fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    from colibri_router.adapters import KimiCompletionOptions, create_kimi_completion

    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", f"{K1},{K2}")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    fake_upstream.kimi.enqueue_for_key(
        K1, error(401, message="Invalid Authentication", error_type="invalid_authentication_error")
    )

    fake_upstream.kimi.enqueue_for_key(K3, error(401, message="Invalid Authentication"))

    pooled = await create_kimi_completion("hi")
    with pytest.raises(ColibriError) as alone:
        await create_kimi_completion("hi", KimiCompletionOptions(api_key=K3))

    assert pooled.content == "echo: hi"
    assert alone.value.kind == "AUTH_FAILED"
    assert keys_sent(fake_upstream, "kimi") == [K1, K2, K3]
