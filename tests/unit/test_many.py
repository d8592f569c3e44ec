"""router_ask_many's service against the loopback fake upstream: parallel answers under one deadline,
failures per model, one admission for every model and the judge, the ledger, the judge's view."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fake_upstream import (
    FakeUpstream,
    anthropic_text,
    error,
    gemini_text,
    kimi_text,
    openai_text,
)

from colibri_router import store as store_module
from colibri_router.ask_many.schema import RouterAskManyInput
from colibri_router.ask_many.service import ask_many
from colibri_router.errors import ColibriError
from colibri_router.pricing import worst_case_cost
from colibri_router.providers import BUILTIN
from colibri_router.schema import RouterCallInput
from colibri_router.session import McpSession, in_session
from colibri_router.settings import load_settings

ROUTES = {"claude": "anthropic", "openai": "openai", "gemini": "gemini", "kimi": "kimi"}
SONNET, GPT, GEMINI, KIMI = "claude-sonnet-4-5", "gpt-4.1", "gemini-2.5-pro", "kimi-k2.6"
FOUR = [SONNET, GPT, GEMINI, KIMI]


@pytest.fixture
def fake(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    """Claude, OpenAI, Gemini and Kimi with keys, all on the fake."""
    for name, route in ROUTES.items():
        spec = BUILTIN[name]
        monkeypatch.setenv(spec.base_url_env, fake_upstream.base_url(route))
        monkeypatch.setenv(spec.key_envs[0], f"sk-{name}-test-0123456789")
    return fake_upstream


def ask(**arguments: Any) -> RouterAskManyInput:
    return RouterAskManyInput.model_validate({"prompt": "Is this migration safe?", "models": FOUR, **arguments})


def chat_requests(fake: FakeUpstream) -> list[Any]:
    return [request for request in fake.requests if request.endpoint == "chat"]


async def ledger() -> Any:
    store = store_module.shared_store(load_settings())
    assert store is not None
    return await store.usage_report(None, "all", "model")


async def test_the_models_answer_in_parallel_in_the_time_of_the_slowest(fake: FakeUpstream) -> None:
    delays = {SONNET: 1.0, GPT: 1.5, GEMINI: 2.0, KIMI: 0.5}
    fake.anthropic.enqueue(anthropic_text("sonnet says yes", delay_s=delays[SONNET]))
    fake.route("openai").enqueue(openai_text("gpt says no", model=GPT, delay_s=delays[GPT]))
    fake.gemini.enqueue(gemini_text("gemini says maybe", model=GEMINI, delay_s=delays[GEMINI]))
    fake.kimi.enqueue(kimi_text("kimi says yes", model=KIMI, delay_s=delays[KIMI]))

    result = await ask_many(ask())

    assert [a.content for a in result.answers] == [
        "sonnet says yes",
        "gpt says no",
        "gemini says maybe",
        "kimi says yes",
    ]
    assert [a.provider for a in result.answers] == ["claude", "openai", "gemini", "kimi"]
    slowest, total = max(delays.values()), sum(delays.values())
    print(f"ask_many wall {result.wall_ms} ms; slowest model {slowest * 1000:.0f} ms; sum {total * 1000:.0f} ms")
    assert slowest * 1000 <= result.wall_ms < total * 1000 - 1000
    arrivals = [request.at for request in chat_requests(fake)]
    assert len(arrivals) == 4 and max(arrivals) - min(arrivals) < 0.5  # all sent at once, not in turn
    assert result.verdict is None and result.warnings is None
    assert fake.violations == []


async def test_a_failing_model_is_an_answer_with_its_error_and_the_others_answer(fake: FakeUpstream) -> None:
    busy = error(429, error_type="rate_limit_exceeded", message="slow down")
    fake.route("openai").enqueue(busy, busy, busy, busy)  # every retry refused: exhausted
    fake.gemini.enqueue(error(401, error_type="UNAUTHENTICATED", message="API key not valid"))
    fake.anthropic.enqueue(anthropic_text("sonnet answers"))
    fake.kimi.enqueue(kimi_text("kimi answers", model=KIMI))

    result = await ask_many(ask())

    sonnet, gpt, gemini, kimi = result.answers
    assert (sonnet.content, kimi.content) == ("sonnet answers", "kimi answers")
    assert gpt.error is not None and gemini.error is not None
    assert (gpt.error.code, gpt.error.kind, gpt.error.retryable) == ("OPENAI_RETRIES_EXHAUSTED", "RATE_LIMITED", True)
    assert (gemini.error.code, gemini.error.kind) == ("GEMINI_API_ERROR", "AUTH_FAILED")
    assert (gpt.provider, gpt.model, gemini.model) == ("openai", GPT, GEMINI)
    assert gpt.content is None and gpt.cost_usd is None
    assert len(fake.route("openai").requests) == 4  # its own retries
    # Every model asked is one ledger row, failures included.
    report = await ledger()
    assert (report.total.calls, report.total.errors) == (4, 2)


async def test_when_every_model_fails_the_call_fails_naming_each(fake: FakeUpstream) -> None:
    fake.anthropic.enqueue(error(401, error_type="authentication_error", message="invalid x-api-key"))
    fake.route("openai").enqueue(error(400, error_type="invalid_request_error", message="bad"))

    with pytest.raises(ColibriError) as caught:
        await ask_many(ask(models=[SONNET, GPT]))

    failure = caught.value
    assert failure.message.startswith("every model failed: ")
    assert SONNET in failure.message and GPT in failure.message
    assert [(a["provider"], a["model"], a["kind"]) for a in failure.attempts] == [
        ("claude", SONNET, "AUTH_FAILED"),
        ("openai", GPT, "INVALID_REQUEST"),
    ]
    assert (await ledger()).total.errors == 2


async def test_a_model_without_a_key_fails_alone(fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BUILTIN["gemini"].key_envs[0])
    result = await ask_many(ask(models=[SONNET, GEMINI]))
    assert result.answers[0].content == "echo: Is this migration safe?"
    assert result.answers[1].error is not None and result.answers[1].error.kind == "CONFIG_ERROR"


async def test_names_for_the_same_model_are_refused_before_anything_is_sent(fake: FakeUpstream) -> None:
    with pytest.raises(ColibriError) as caught:
        await ask_many(ask(models=["sonnet", f"claude:{SONNET}", GPT]))
    assert caught.value.code == "INVALID_REQUEST"
    assert "claude:claude-sonnet-4-5 twice" in caught.value.message
    assert fake.requests == []


def _worst(provider: str, model: str) -> float:
    cost = worst_case_cost(provider, model, 100, 1024)
    assert cost is not None
    return cost


async def test_max_cost_counts_every_model_and_the_judge_before_anything_is_sent(fake: FakeUpstream) -> None:
    one = _worst("anthropic", SONNET)
    # Each model alone is under the cap; the two together are not.
    with pytest.raises(ColibriError) as caught:
        await ask_many(ask(models=[SONNET, "claude-opus-4-1"], max_cost_usd=one * 1.5))
    assert caught.value.code == "BUDGET_EXCEEDED"
    assert "nothing was sent" in caught.value.message
    # The models fit; with the judge (who reads both answers) they do not.
    both = _worst("anthropic", SONNET) + _worst("openai", GPT)
    with pytest.raises(ColibriError) as caught:
        await ask_many(ask(models=[SONNET, GPT], judge="sonnet", max_cost_usd=both * 1.2))
    assert "and the judge" in caught.value.message
    assert fake.requests == []
    result = await ask_many(ask(models=[SONNET, GPT], max_cost_usd=both * 1.2))
    assert all(answer.error is None for answer in result.answers)


async def test_a_reached_budget_refuses_before_any_request(fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", "0")
    with pytest.raises(ColibriError) as caught:
        await ask_many(ask(judge="sonnet"))
    assert caught.value.code == "BUDGET_EXCEEDED"
    assert fake.requests == []


async def test_the_whole_worst_case_is_reserved_once_and_settled(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limit above what the answers cost but below the reserved worst case: the next call passes only
    if the reservation was settled (dropped for the real costs) once every answer was in."""
    worst = _worst("anthropic", SONNET) + _worst("openai", GPT)
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", f"{worst * 0.5:.6f}")
    first = await ask_many(ask(models=[SONNET, GPT]))
    assert 0 < first.total_cost_usd < worst * 0.5
    second = await ask_many(ask(models=[SONNET, GPT]))
    assert all(answer.error is None for answer in second.answers)
    report = await ledger()
    assert report.total.calls == 4
    assert report.total.cost_micro_usd == round((first.total_cost_usd + second.total_cost_usd) * 1e6)


async def test_the_judge_sees_anonymised_answers_and_the_labels_map_back(fake: FakeUpstream) -> None:
    fake.anthropic.enqueue(anthropic_text("Yes: the migration only adds a nullable column."))
    fake.route("openai").enqueue(error(401, error_type="invalid_api_key", message="bad key"))
    fake.gemini.enqueue(gemini_text("Yes, but lock the table first.", model=GEMINI))
    fake.kimi.enqueue(kimi_text("Mostly: B forgets the index.\n\n**Agreement:** 0.7", model=KIMI))

    result = await ask_many(
        ask(models=[SONNET, GPT, GEMINI], judge="kimi", judge_instructions="Weigh data loss above all.")
    )

    [judge_request] = fake.kimi.requests
    prompt = judge_request.body["messages"][-1]["content"]
    assert "Is this migration safe?" in prompt
    assert "Answer A:\nYes: the migration only adds a nullable column." in prompt
    assert "Answer B:\nYes, but lock the table first." in prompt
    assert "Answer C" not in prompt  # the failed model has no label
    assert "Weigh data loss above all." in prompt
    for name in (SONNET, GPT, GEMINI, "claude", "gemini", "openai", "sonnet"):
        assert name not in prompt.lower()
    verdict = result.verdict
    assert verdict is not None
    assert verdict.labels == {"A": SONNET, "B": GEMINI}
    assert (verdict.model, verdict.agreement, verdict.error) == (KIMI, 0.7, None)
    assert verdict.content == "Mostly: B forgets the index."  # the score line is not repeated
    assert result.total_cost_usd == pytest.approx(
        sum(a.cost_usd or 0 for a in result.answers) + (verdict.cost_usd or 0)
    )
    report = await ledger()
    assert (report.total.calls, report.total.errors) == (4, 1)  # three models and the judge, once each


async def test_a_judge_that_gives_no_score_has_no_agreement(fake: FakeUpstream) -> None:
    fake.kimi.enqueue(kimi_text("They broadly agree.", model=KIMI))
    result = await ask_many(ask(models=[SONNET, GPT], judge="kimi"))
    assert result.verdict is not None
    assert (result.verdict.content, result.verdict.agreement) == ("They broadly agree.", None)


async def test_a_failing_judge_leaves_the_answers(fake: FakeUpstream) -> None:
    fake.kimi.enqueue(error(401, error_type="invalid_authentication_error", message="bad key"))
    result = await ask_many(ask(models=[SONNET, GPT], judge="kimi"))
    assert [a.content for a in result.answers] == ["echo: Is this migration safe?"] * 2
    assert result.verdict is not None and result.verdict.error is not None
    assert result.verdict.error.kind == "AUTH_FAILED" and result.verdict.content is None


async def test_with_one_answer_the_judge_is_not_asked(fake: FakeUpstream) -> None:
    fake.route("openai").enqueue(error(400, error_type="invalid_request_error", message="bad"))
    result = await ask_many(ask(models=[SONNET, GPT], judge="kimi"))
    assert result.verdict is None
    assert result.warnings == ["the judge was not asked: only one model answered"]
    assert fake.kimi.requests == []


async def test_summary_cuts_each_answer_and_full_keeps_everything(fake: FakeUpstream) -> None:
    long = "word " * 200
    fake.anthropic.enqueue(anthropic_text(long, thinking="hmm"), anthropic_text(long, thinking="hmm"))
    summary = await ask_many(ask(models=[SONNET, GPT], judge="kimi"))  # summary is the default with a judge
    assert summary.answers[0].content == long[:400] + "…"
    assert summary.answers[0].thinking is None
    full = await ask_many(ask(models=[SONNET, GPT], judge="kimi", detail="full"))
    assert (full.answers[0].content, full.answers[0].thinking) == (long, "hmm")


async def test_a_sparse_answer_leaves_out_what_it_lacks(fake: FakeUpstream) -> None:
    fake.route("openai").enqueue(error(400, error_type="invalid_request_error", message="bad"))
    result = await ask_many(ask(models=[SONNET, GPT]))
    dumped = result.model_dump(mode="json", exclude_none=True)
    assert set(dumped["answers"][1]) == {"model", "provider", "latency_ms", "error"}
    assert "thinking" not in dumped["answers"][0] and "cached_tokens" not in dumped["answers"][0]
    assert "verdict" not in dumped and "warnings" not in dumped


async def test_the_config_files_fallback_does_not_answer_for_a_model(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[fallback]\nmodels = ["kimi"]\n')
    monkeypatch.setenv("COLIBRI_CONFIG", str(config))
    fake.route("openai").enqueue(error(404, error_type="model_not_found", message="no such model"))
    result = await ask_many(ask(models=[SONNET, GPT]))
    assert result.answers[1].error is not None
    assert fake.kimi.requests == []


def test_the_input_is_router_calls_without_the_one_answerer_fields() -> None:
    """A field router_call gains (``files``...) is router_ask_many's too, with its validation."""
    inherited = set(RouterCallInput.model_fields) - set(RouterAskManyInput.NOT_TAKEN)
    schema = RouterAskManyInput.model_json_schema()
    assert inherited | {"models", "judge", "judge_instructions", "judge_schema", "detail"} == set(schema["properties"])
    for name in RouterAskManyInput.NOT_TAKEN:
        with pytest.raises(ValueError, match=f"`{name}`"):
            RouterAskManyInput.model_validate({"prompt": "a", "models": ["a", "b"], name: "x"})
    with pytest.raises(ValueError, match="exactly one of `prompt`"):
        RouterAskManyInput.model_validate({"models": ["a", "b"]})
    for models in (["a"], [str(n) for n in range(9)]):
        with pytest.raises(ValueError, match="models"):
            RouterAskManyInput.model_validate({"prompt": "a", "models": models})
    assert "$defs" not in json.dumps(schema)  # router_call's shapes are named, not repeated


async def test_a_judge_the_rules_cannot_place_is_refused_before_anything_is_sent(fake: FakeUpstream) -> None:
    with pytest.raises(ColibriError) as caught:
        await ask_many(ask(models=[SONNET, GPT], judge="claude:"))
    assert caught.value.code == "INVALID_REQUEST"
    assert fake.requests == []


async def test_the_deadline_holds_for_every_model(fake: FakeUpstream) -> None:
    fake.anthropic.enqueue(anthropic_text("late", delay_s=5))
    started = time.monotonic()
    result = await ask_many(ask(models=[SONNET, GPT], timeout_s=0.8))
    assert time.monotonic() - started < 3
    assert result.answers[0].error is not None and result.answers[0].error.kind == "TIMEOUT"
    assert result.answers[1].content == "echo: Is this migration safe?"


async def test_a_cancelled_call_still_has_a_row_per_model_and_settles_its_reservation(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    worst = _worst("anthropic", SONNET) + _worst("openai", GPT)
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", f"{worst * 0.5:.6f}")
    fake.anthropic.enqueue(anthropic_text("late", hold_open_s=30))
    fake.route("openai").enqueue(openai_text("late", model=GPT, hold_open_s=30))
    with anyio.move_on_after(0.5):
        await ask_many(ask(models=[SONNET, GPT]))
    report = await ledger()
    assert (report.total.calls, report.total.errors, report.total.cost_micro_usd) == (2, 2, 0)
    # The reservation (the worst case, above the limit) was dropped: the next call is admitted.
    result = await ask_many(ask(models=[SONNET, GPT]))
    assert all(answer.error is None for answer in result.answers)


async def test_files_are_read_once_and_sent_to_every_model(
    fake: FakeUpstream, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "migrate.sql").write_text("ALTER TABLE users DROP COLUMN email;\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    fake.anthropic.enqueue(anthropic_text("sonnet: unsafe"))
    fake.route("openai").enqueue(openai_text("gpt: unsafe", model=GPT))

    result = await ask_many(ask(models=[SONNET, GPT], files=["migrate.sql", "*.bin"]))

    bodies = [json.dumps(request.body) for request in chat_requests(fake)]
    assert len(bodies) == 2
    assert all("DROP COLUMN email" in body for body in bodies)
    assert [f.path for f in result.files_read or []] == ["migrate.sql"]
    skipped = [w for w in result.warnings or [] if "blob.bin" in w]
    assert len(skipped) == 1  # said once for the call, not once per answer
    assert not any("blob.bin" in w for answer in result.answers for w in answer.warnings or [])


async def test_files_over_http_are_refused_without_a_files_root(fake: FakeUpstream, tmp_path: Any) -> None:
    (tmp_path / "migrate.sql").write_text("ALTER TABLE users DROP COLUMN email;\n")
    over_http = McpSession(over_http=True)  # as the HTTP shell sets it
    with pytest.raises(ColibriError) as caught, in_session(over_http):
        await ask_many(ask(files=[str(tmp_path / "migrate.sql")]))
    assert caught.value.kind == "INVALID_REQUEST"
    assert "COLIBRI_HTTP_FILES_ROOT" in caught.value.message
    assert chat_requests(fake) == []
