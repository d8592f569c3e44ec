"""The router's planning step: the request a service prices is the request that goes out, built once.

router_ask_many prices each model's planned request and hands that plan to the router, which sends it
as it is; router_call prices, in its admission, the request the router is about to send; the figure a
cost cap names is the one estimate of that request."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text, openai_text

from colibri_router import router
from colibri_router.accounting import worst_case
from colibri_router.ask_many.schema import RouterAskManyInput
from colibri_router.ask_many.service import ask_many
from colibri_router.call.service import serve
from colibri_router.errors import ColibriError, InvalidRequestError
from colibri_router.providers import BUILTIN, load_registry
from colibri_router.router import Plan, plan, route
from colibri_router.router.call import Call, call_from, call_of
from colibri_router.schema import RouterCallInput
from colibri_router.settings import load_settings
from colibri_router.token_estimate import request_tokens

SONNET, GPT = "claude-sonnet-4-5", "gpt-4.1"


@pytest.fixture
def fake(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    for name, route_name in {"claude": "anthropic", "openai": "openai"}.items():
        spec = BUILTIN[name]
        monkeypatch.setenv(spec.base_url_env, fake_upstream.base_url(route_name))
        monkeypatch.setenv(spec.key_envs[0], f"sk-{name}-test-0123456789")
    return fake_upstream


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The model of every request the router builds."""
    models: list[str] = []
    original = router.build_request

    def counting(call: Call, model: str, **options: Any) -> Any:
        models.append(model)
        return original(call, model, **options)

    monkeypatch.setattr(router, "build_request", counting)
    return models


def chat_bodies(fake: FakeUpstream) -> list[str]:
    return [json.dumps(request.body) for request in fake.requests if request.endpoint == "chat"]


def choice_of(name: str) -> Any:
    return load_registry().choose(None, name, load_settings())


async def test_ask_many_builds_each_models_request_once_to_price_and_send_it(
    fake: FakeUpstream, built: list[str]
) -> None:
    fake.anthropic.enqueue(anthropic_text("sonnet: yes"), anthropic_text("A is right. Agreement: 0.5"))
    fake.route("openai").enqueue(openai_text("gpt: no", model=GPT))
    asked = RouterAskManyInput.model_validate(
        {"prompt": "Is this safe?", "models": [SONNET, GPT], "judge": SONNET, "max_cost_usd": 5.0}
    )

    result = await ask_many(asked)

    assert all(answer.error is None for answer in result.answers) and result.verdict is not None
    # One build per model (priced, then sent as planned); the judge's twice: priced before the
    # answers exist, then asked with them.
    assert sorted(built) == sorted([SONNET, GPT, SONNET, SONNET])
    assert len(chat_bodies(fake)) == 3


async def test_without_a_price_check_nothing_is_planned_ahead(fake: FakeUpstream, built: list[str]) -> None:
    fake.anthropic.enqueue(anthropic_text("sonnet: yes"))
    fake.route("openai").enqueue(openai_text("gpt: no", model=GPT))
    await ask_many(RouterAskManyInput.model_validate({"prompt": "Is this safe?", "models": [SONNET, GPT]}))
    assert sorted(built) == sorted([SONNET, GPT])


async def test_the_router_sends_the_plan_it_is_handed_for_that_model(fake: FakeUpstream) -> None:
    args = call_from(RouterCallInput.model_validate({"prompt": "hi", "model": SONNET, "fallback": []}))
    sonnet = choice_of(SONNET)
    planned = await plan(args, sonnet, load_settings())
    marked = Plan(sonnet, replace(planned.request, system="PLANNED-SYSTEM"), ("a warning from planning",))
    fake.anthropic.enqueue(anthropic_text("one"), anthropic_text("two"))

    result = (await route(args, planned=marked)).result
    assert "PLANNED-SYSTEM" in chat_bodies(fake)[0]
    assert "a warning from planning" in result.warnings

    # A plan for another model is not this one's: the router builds the request itself.
    elsewhere = Plan(choice_of(GPT), replace(planned.request, system="PLANNED-SYSTEM"), ())
    await route(args, planned=elsewhere)
    assert "PLANNED-SYSTEM" not in chat_bodies(fake)[1]


async def test_a_cost_cap_names_the_worst_case_of_the_planned_request(fake: FakeUpstream) -> None:
    args = RouterCallInput.model_validate(
        {"prompt": "Summarise " + "the report " * 400, "model": SONNET, "max_tokens": 2000, "max_cost_usd": 0.000001}
    )
    sonnet = choice_of(SONNET)
    expected = worst_case(sonnet, (await plan(call_from(args), sonnet, load_settings())).request)
    assert expected is not None

    with pytest.raises(ColibriError) as refused:
        await serve(args)

    assert refused.value.code == "BUDGET_EXCEEDED"
    assert f"could cost up to ${expected:.6f} with {SONNET}" in refused.value.message
    assert fake.requests == []


async def test_planning_refuses_a_call_with_files_over_the_context_limit(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "big.txt").write_text("word " * 300)
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("COLIBRI_CONTEXT_MAX_TOKENS", "100")
    settings = load_settings()
    args = await call_of(RouterCallInput.model_validate({"prompt": "Review", "files": ["big.txt"]}), settings)
    sonnet = choice_of(SONNET)
    request, _ = router.build_request(args, sonnet.model)

    with pytest.raises(InvalidRequestError) as refused:
        await plan(args, sonnet, settings)

    assert f"about {request_tokens(request)} tokens, over the limit of 100" in refused.value.message
