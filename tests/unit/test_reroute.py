"""A turn goes to a model that can read it (issue 36, part 2), through the router_call and
router_ask_many services to the strict fake upstream: images to a text-only model, a PDF to a model
that would get only its text, a conversation over the model's context window; with the setting (env
or the config file's ``[routing]``) and without it, with and without an explicit ``fallback``, in a
thread continuation, and in the ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text, error, gemini_text, openai_text
from media_samples import document_block, image_block, pdf_with_text, png

from colibri_router import store as store_module
from colibri_router.accounting import worst_case
from colibri_router.ask_many.schema import RouterAskManyInput
from colibri_router.ask_many.service import ask_many
from colibri_router.call.service import serve
from colibri_router.errors import ColibriError
from colibri_router.providers import BUILTIN, load_registry
from colibri_router.router import plan
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput
from colibri_router.settings import load_settings

ROUTES = {"claude": "anthropic", "openai": "openai", "gemini": "gemini", "deepseek": "deepseek"}
FLASH = "gemini-3.5-flash"  # what the alias gemini-flash stands for
SHOT = png(8, 6)
SCREENSHOT = [{"type": "text", "text": "What does this screenshot show?"}, image_block(SHOT)]
REPORT = [{"type": "text", "text": "Summarise this report."}, document_block(pdf_with_text("Quarterly numbers"))]
# deepseek-chat's window is 64,000 tokens; at 3 characters a token this is about 70,000.
LONG = "lorem ipsum dolor sit amet " * 7_800


@pytest.fixture(autouse=True)
def fake(fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> FakeUpstream:
    for name, route in ROUTES.items():
        spec = BUILTIN[name]
        monkeypatch.setenv(spec.base_url_env, fake_upstream.base_url(route))
        monkeypatch.setenv(spec.key_envs[0], f"sk-{name}-test-0123456789")
    return fake_upstream


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("COLIBRI_CONFIG", str(path))
    return path


async def ask(content: Any, model: str = "deepseek-chat", **args: Any) -> Any:
    request = RouterCallInput.model_validate(
        {"model": model, "messages": [{"role": "user", "content": content}]} | args
    )
    return await serve(request)


def requests_to(fake: FakeUpstream, route: str) -> list[Any]:
    return [request for request in fake.route(route).requests if request.endpoint == "chat"]


async def ledger_models() -> dict[str | None, int]:
    store = store_module.shared_store(load_settings())
    assert store is not None
    report = await store.usage_report(None, "all", "model")
    return {group.key: group.calls for group in report.groups}


# -- images ------------------------------------------------------------------------------------------------


async def test_without_a_vision_model_an_image_turn_is_refused_naming_the_setting(fake: FakeUpstream) -> None:
    with pytest.raises(ColibriError) as raised:
        await ask(SCREENSHOT)
    assert raised.value.code == "INVALID_REQUEST"
    assert raised.value.message.startswith("deepseek-chat cannot read images (DeepSeek API docs")
    assert "Set COLIBRI_VISION_MODEL (or [routing] vision in the config file)" in raised.value.message
    assert [(a["model"], a["kind"]) for a in raised.value.attempts] == [("deepseek-chat", "INVALID_REQUEST")]
    assert fake.requests == []


async def test_with_a_vision_model_an_image_turn_is_answered_by_it_with_a_warning(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    fake.gemini.enqueue(gemini_text("A login form.", model=FLASH))
    result = await ask(SCREENSHOT)
    assert (result.provider, result.model, result.content) == ("gemini", FLASH, "A login form.")
    assert result.warnings[0] == (f"deepseek-chat cannot read images: sent to {FLASH} instead (COLIBRI_VISION_MODEL)")
    assert [(a.provider, a.model, a.outcome) for a in result.attempts] == [("gemini", FLASH, "ok")]
    assert requests_to(fake, "deepseek") == []
    [sent] = requests_to(fake, "gemini")
    assert sent.body["contents"][0]["parts"][1]["inlineData"]["mimeType"] == "image/png"
    assert fake.violations == []
    assert await ledger_models() == {FLASH: 1}


async def test_the_config_files_routing_vision_does_the_same_and_the_environment_wins(
    fake: FakeUpstream, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text('[routing]\nvision = "sonnet"\n')
    result = await ask(SCREENSHOT)
    assert (result.provider, result.model) == ("claude", "claude-sonnet-4-5")
    assert result.warnings[0].endswith("sent to claude-sonnet-4-5 instead ([routing] vision)")
    monkeypatch.setenv("COLIBRI_VISION_MODEL", FLASH)
    fake.gemini.enqueue(gemini_text("seen", model=FLASH))
    assert (await ask(SCREENSHOT)).provider == "gemini"
    assert requests_to(fake, "deepseek") == []


async def test_a_screenshot_a_tool_returned_counts_as_an_image(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    fake.gemini.enqueue(gemini_text("a chart", model=FLASH))
    shot = {"type": "tool_result", "tool_use_id": "call_1", "content": [image_block(SHOT)]}
    messages = [
        {"role": "user", "content": "take a screenshot"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "screenshot", "input": {}}]},
        {"role": "user", "content": [shot]},
    ]
    result = await serve(RouterCallInput.model_validate({"model": "deepseek-chat", "messages": messages}))
    assert result.provider == "gemini" and "deepseek-chat cannot read images" in result.warnings[0]
    assert requests_to(fake, "deepseek") == []


async def test_an_explicit_fallback_is_the_callers_choice_no_reroute(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    fake.anthropic.enqueue(anthropic_text("seen by claude"))
    result = await ask(SCREENSHOT, fallback=["claude-sonnet-4-5"])
    assert result.provider == "claude"
    assert result.warnings[0].startswith("skipped deepseek-chat: deepseek-chat cannot read images")
    assert [a.model for a in result.attempts] == ["deepseek-chat", "claude-sonnet-4-5"]
    with pytest.raises(ColibriError) as raised:
        await ask(SCREENSHOT, fallback=[])  # no fallback at all, said explicitly
    assert raised.value.code == "INVALID_REQUEST" and "COLIBRI_VISION_MODEL" not in raised.value.message
    assert requests_to(fake, "gemini") == [] and requests_to(fake, "deepseek") == []


async def test_a_model_that_reads_images_is_not_rerouted(fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    fake.route("openai").enqueue(openai_text("I see it", model="gpt-4.1"))
    result = await ask(SCREENSHOT, model="gpt-4.1")
    assert (result.provider, result.warnings) == ("openai", [])
    assert await ask("no image here") is not None  # deepseek-chat with text only: deepseek answers
    assert len(requests_to(fake, "deepseek")) == 1 and requests_to(fake, "gemini") == []


async def test_when_the_vision_model_fails_the_error_names_it_and_why_it_was_asked(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    fake.gemini.enqueue(error(401, error_type="UNAUTHENTICATED", message="API key not valid"))
    with pytest.raises(ColibriError) as raised:
        await ask(SCREENSHOT)
    assert raised.value.kind == "AUTH_FAILED"
    assert (raised.value.provider, raised.value.model) == ("gemini", FLASH)
    assert "(deepseek-chat cannot read images: sent to gemini-3.5-flash instead" in raised.value.message
    assert [(a["model"], a["kind"]) for a in raised.value.attempts] == [(FLASH, "AUTH_FAILED")]
    assert await ledger_models() == {FLASH: 1}


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("gemni-flash", "COLIBRI_VISION_MODEL: unknown model 'gemni-flash'"),
        ("gpt-3.5-turbo", "COLIBRI_VISION_MODEL names gpt-3.5-turbo, but gpt-3.5-turbo cannot read images"),
    ],
)
async def test_a_vision_model_that_cannot_be_placed_or_cannot_see_is_a_config_error(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch, setting: str, problem: str
) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", setting)
    with pytest.raises(ColibriError) as raised:
        await ask(SCREENSHOT)
    assert raised.value.kind == "CONFIG_ERROR"
    assert raised.value.message.startswith(problem)
    assert fake.requests == []


# -- PDFs --------------------------------------------------------------------------------------------------


async def test_a_pdf_goes_to_the_documents_model_instead_of_as_text(fake: FakeUpstream, config: Path) -> None:
    config.write_text('[routing]\ndocuments = "sonnet"\n')
    fake.anthropic.enqueue(anthropic_text("Numbers are up."))
    result = await ask(REPORT)
    assert (result.provider, result.model) == ("claude", "claude-sonnet-4-5")
    assert result.warnings == [
        "deepseek-chat reads no PDFs (only their extracted text): sent to claude-sonnet-4-5 instead "
        "([routing] documents)"
    ]
    [sent] = requests_to(fake, "anthropic")
    assert sent.body["messages"][0]["content"][1]["type"] == "document"  # native, not text
    assert requests_to(fake, "deepseek") == [] and fake.violations == []


async def test_without_a_documents_model_the_pdfs_text_goes_as_before(fake: FakeUpstream) -> None:
    result = await ask(REPORT)
    assert result.provider == "deepseek"
    assert "deepseek-chat cannot read PDFs natively: sent the text of a PDF, extracted locally" in result.warnings
    [sent] = requests_to(fake, "deepseek")
    assert "Quarterly numbers" in str(sent.body["messages"])


async def test_a_pdf_for_a_model_that_reads_pdfs_stays(fake: FakeUpstream, config: Path) -> None:
    config.write_text('[routing]\ndocuments = "gemini-flash"\n')
    fake.anthropic.enqueue(anthropic_text("read natively"))
    result = await ask(REPORT, model="claude-sonnet-4-5")
    assert (result.provider, result.warnings) == ("claude", [])


# -- long conversations ------------------------------------------------------------------------------------


async def test_a_conversation_over_the_models_window_goes_to_the_long_context_model(
    fake: FakeUpstream, config: Path
) -> None:
    config.write_text('[routing]\nlong_context = "gemini-flash"\n')
    fake.gemini.enqueue(gemini_text("summarised", model=FLASH))
    result = await ask(LONG)
    assert (result.provider, result.model) == ("gemini", FLASH)
    [warning] = result.warnings
    assert warning.startswith("the conversation (about ")
    assert warning.endswith(
        f"tokens) is over deepseek-chat's context window of 64000: sent to {FLASH} instead ([routing] long_context)"
    )
    assert requests_to(fake, "deepseek") == []


async def test_a_conversation_within_the_window_or_without_the_setting_stays(
    fake: FakeUpstream, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text('[routing]\nlong_context = "gemini-flash"\n')
    assert (await ask(LONG[:150_000])).provider == "deepseek"  # about 50,000 tokens: it fits
    config.write_text("")
    assert (await ask(LONG)).provider == "deepseek"  # unset: sent as before; the provider decides
    monkeypatch.setenv("COLIBRI_LONG_CONTEXT_MODEL", "gemini-flash")
    fake.gemini.enqueue(gemini_text("ok", model=FLASH))
    result = await ask(LONG)
    assert result.provider == "gemini" and result.warnings[0].endswith("(COLIBRI_LONG_CONTEXT_MODEL)")
    assert len(requests_to(fake, "deepseek")) == 2


async def test_max_tokens_counts_against_the_window(fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_LONG_CONTEXT_MODEL", "gemini-flash")
    fake.gemini.enqueue(gemini_text("ok", model=FLASH))
    fits = LONG[:150_000]  # about 50,000 tokens: within 64,000, but not with 20,000 more to answer
    assert (await ask(fits)).provider == "deepseek"
    assert (await ask(fits, max_tokens=20_000)).provider == "gemini"


async def test_an_image_and_a_long_conversation_take_two_steps(fake: FakeUpstream, config: Path) -> None:
    # The vision model's window (gpt-4o-mini, 128,000) is too small for this one: the long-context
    # model, which reads images too, answers.
    config.write_text('[routing]\nvision = "openai:gpt-4o-mini"\nlong_context = "gemini-flash"\n')
    fake.gemini.enqueue(gemini_text("both", model=FLASH))
    huge = LONG * 2  # about 140,000 tokens
    result = await ask([{"type": "text", "text": huge}, image_block(SHOT)])
    assert result.provider == "gemini"
    assert result.warnings[0] == "deepseek-chat cannot read images: sent to gpt-4o-mini instead ([routing] vision)"
    assert "over gpt-4o-mini's context window of 128000: sent to gemini-3.5-flash instead" in result.warnings[1]
    assert requests_to(fake, "openai") == [] and requests_to(fake, "deepseek") == []


# -- threads and many models -------------------------------------------------------------------------------


async def test_a_thread_continuation_whose_history_holds_an_image_goes_to_the_vision_model(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.gemini.enqueue(gemini_text("A login form.", model=FLASH))
    first = await ask(SCREENSHOT, model="gemini-flash", thread_id="new")
    assert first.thread_id is not None
    # The next turn is text, to a text-only model; the thread's history holds the screenshot.
    follow_up = [{"role": "user", "content": "Which field is empty?"}]
    request = RouterCallInput.model_validate(
        {"model": "deepseek-chat", "messages": follow_up, "thread_id": first.thread_id}
    )
    with pytest.raises(ColibriError, match="COLIBRI_VISION_MODEL"):
        await serve(request)
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    fake.gemini.enqueue(gemini_text("The password.", model=FLASH))
    second = await serve(request)
    assert (second.provider, second.model, second.thread_id) == ("gemini", FLASH, first.thread_id)
    assert second.warnings[0].startswith("deepseek-chat cannot read images: sent to gemini-3.5-flash")
    assert requests_to(fake, "deepseek") == []
    store = store_module.shared_store(load_settings())
    assert store is not None
    stored = await store.load_thread(first.thread_id, None)
    assert stored.messages[-1] == {"role": "assistant", "content": "The password."}
    assert await ledger_models() == {FLASH: 2, "deepseek-chat": 1}  # the refused attempt has its row too


async def test_ask_many_reroutes_each_model_that_cannot_read_the_turn(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    fake.gemini.enqueue(gemini_text("gemini sees a form", model=FLASH))
    fake.route("openai").enqueue(openai_text("gpt sees a form", model="gpt-4.1"))
    args = RouterAskManyInput.model_validate(
        {"messages": [{"role": "user", "content": SCREENSHOT}], "models": ["deepseek-chat", "gpt-4.1"]}
    )
    result = await ask_many(args)
    rerouted, direct = result.answers
    assert (rerouted.provider, rerouted.model, rerouted.content) == ("gemini", FLASH, "gemini sees a form")
    assert rerouted.warnings == [f"deepseek-chat cannot read images: sent to {FLASH} instead (COLIBRI_VISION_MODEL)"]
    assert (direct.provider, direct.warnings) == ("openai", None)
    assert requests_to(fake, "deepseek") == []
    assert await ledger_models() == {FLASH: 1, "gpt-4.1": 1}


async def test_ask_many_without_a_vision_model_fails_that_model_alone_naming_the_setting(fake: FakeUpstream) -> None:
    fake.route("openai").enqueue(openai_text("gpt sees a form", model="gpt-4.1"))
    args = RouterAskManyInput.model_validate(
        {"messages": [{"role": "user", "content": SCREENSHOT}], "models": ["deepseek-chat", "gpt-4.1"]}
    )
    failed, answered = (await ask_many(args)).answers
    assert failed.error is not None and failed.error.code == "INVALID_REQUEST"
    assert "COLIBRI_VISION_MODEL" in failed.error.message
    assert answered.content == "gpt sees a form"


async def test_a_plan_is_for_the_model_rerouted_to_and_ask_many_prices_that(
    fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    settings = load_settings()
    deepseek = load_registry().choose(None, "deepseek-chat", settings)
    call = call_from(
        RouterCallInput.model_validate({"messages": [{"role": "user", "content": SCREENSHOT}], "fallback": []})
    )
    planned = await plan(call, deepseek, settings, reroute=True)
    assert (planned.choice.provider.name, planned.choice.model, planned.request.model) == ("gemini", FLASH, FLASH)
    with pytest.raises(ColibriError, match="deepseek-chat cannot read images"):
        await plan(call, deepseek, settings)  # an explicit fallback ([]): no reroute
    # With a cost cap, router_ask_many prices each model's plan before anything is sent.
    worst = worst_case(planned.choice, planned.request)
    assert worst is not None
    args = RouterAskManyInput.model_validate(
        {
            "messages": [{"role": "user", "content": SCREENSHOT}],
            "models": ["deepseek-chat", "gpt-4.1"],
            "max_cost_usd": worst / 2,
        }
    )
    with pytest.raises(ColibriError) as raised:
        await ask_many(args)
    assert raised.value.kind == "BUDGET_EXCEEDED"
    assert f"deepseek-chat ${worst:.6f}" in raised.value.message
    assert fake.requests == []


async def test_ask_manys_judge_is_asked_as_named(fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    # The question is over deepseek-chat's window, but the judge is not rerouted (its verdict has no
    # warnings to say so); the models, whose windows hold it, are asked as named too.
    monkeypatch.setenv("COLIBRI_LONG_CONTEXT_MODEL", "gemini-flash")
    fake.route("openai").enqueue(openai_text("gpt: fine", model="gpt-4.1"))
    fake.anthropic.enqueue(anthropic_text("claude: fine"))
    fake.route("deepseek").enqueue(openai_text("A is right. Agreement: 0.9", model="deepseek-chat"))
    args = RouterAskManyInput.model_validate(
        {"prompt": LONG, "models": ["gpt-4.1", "claude-sonnet-4-5"], "judge": "deepseek-chat"}
    )
    result = await ask_many(args)
    assert [answer.model for answer in result.answers] == ["gpt-4.1", "claude-sonnet-4-5"]
    assert result.verdict is not None and result.verdict.model == "deepseek-chat"
    assert requests_to(fake, "gemini") == [] and len(requests_to(fake, "deepseek")) == 1
