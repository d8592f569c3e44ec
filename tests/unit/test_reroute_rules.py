"""The rerouting rule itself (router/reroute.py), on any mix of media, conversation length, chosen
model and settings: the model reached reads what the call holds wherever a setting could have sent it
elsewhere, each warning names the model left and the one gone to, no model is visited twice, and the
config file's ``[routing]`` is read and checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from media_samples import document_block, image_block, pdf_with_text, png

from colibri_router.errors import ColibriError, ConfigError
from colibri_router.pricing import context_window
from colibri_router.providers import Choice, load_registry
from colibri_router.providers.profiles import profile_for
from colibri_router.router import build_request
from colibri_router.router.call import call_from
from colibri_router.router.fit import MediaUnreadable
from colibri_router.router.reroute import reroute
from colibri_router.schema import RouterCallInput
from colibri_router.settings import Settings, load_settings
from colibri_router.token_estimate import request_tokens

MODELS = [
    "deepseek-chat",  # text only, 64k
    "gpt-3.5-turbo",  # text only
    "gpt-4o-mini",  # images and PDFs, 128k
    "gemini-3.5-flash",  # images and PDFs, 1M
    "claude-sonnet-4-5",  # images and PDFs, 200k
    "kimi-k2.6",  # images, no PDFs
    "command-a-03-2025",  # text only
    "mistral-small-latest",  # images, no PDFs
]
IMAGE, PDF = image_block(png()), document_block(pdf_with_text("numbers"))
WORDS = "lorem ipsum dolor sit amet "  # 27 characters: 9 tokens at 3 characters a token


def call(images: bool, documents: bool, words: int) -> RouterCallInput:
    content: list[dict[str, Any]] = [{"type": "text", "text": "Look. " + WORDS * words}]
    content += [IMAGE] * images + [PDF] * documents
    return RouterCallInput.model_validate({"messages": [{"role": "user", "content": content}]})


def unmet(rule: str, args: RouterCallInput, choice: Choice) -> bool:
    """Whether ``choice`` fails ``rule`` for ``args``, from the registry's facts directly."""
    media = profile_for(choice.model).media
    blocks = [b for m in args.messages or () for b in m.content if not isinstance(m.content, str)]
    kinds = {getattr(block, "type", None) for block in blocks}
    if rule == "vision":
        return "image" in kinds and media.images is False
    if rule == "documents":
        return "document" in kinds and not media.pdf
    window = context_window(choice.provider.price_provider, choice.model)
    request = build_request(call_from(args), choice.model)[0]
    return window is not None and request_tokens(request) > window - request.max_tokens


SETTING = {"vision": "vision_model", "documents": "documents_model", "long_context": "long_context_model"}
VARIABLE = {"vision": "COLIBRI_VISION_MODEL", "documents": "COLIBRI_DOCUMENTS_MODEL"}
VARIABLE["long_context"] = "COLIBRI_LONG_CONTEXT_MODEL"


@given(
    model=st.sampled_from(MODELS),
    images=st.booleans(),
    documents=st.booleans(),
    words=st.sampled_from([10, 9_000, 25_000, 140_000]),  # about 90, 81k, 225k and 1.26M tokens
    targets=st.fixed_dictionaries({rule: st.none() | st.sampled_from(MODELS) for rule in SETTING}),
)
@example(  # two steps: the vision model's window is too small for the conversation
    model="deepseek-chat",
    images=True,
    documents=False,
    words=25_000,
    targets={"vision": "gpt-4o-mini", "documents": None, "long_context": "gemini-3.5-flash"},
)
@settings(max_examples=400)
def test_the_model_reached_reads_the_call_wherever_a_setting_could_send_it(
    model: str, images: bool, documents: bool, words: int, targets: dict[str, str | None]
) -> None:
    registry = load_registry()
    configured = Settings(**{SETTING[rule]: name for rule, name in targets.items() if name})
    args = call(images, documents, words)
    start = registry.choose(None, model, configured)
    refused: ColibriError | None = None
    try:
        final, warnings = reroute(
            args.conversation(), start, registry, configured, lambda: build_request(call_from(args), model)[0]
        )
    except (MediaUnreadable, ConfigError) as error:
        refused = error
    if isinstance(refused, MediaUnreadable):
        # Only images with no vision model set are refused here, naming the setting.
        assert images and targets["vision"] is None and "Set COLIBRI_VISION_MODEL" in refused.message
        return
    if refused is not None:
        # A setting names a model that fails the very rule that chose it.
        rule = next(r for r in SETTING if refused.message.startswith(VARIABLE[r]))
        assert unmet(rule, args, registry.choose(None, targets[rule] or "", configured))
        return
    # Each warning leaves one model for the next; none is visited twice.
    visited = [start.model]
    for warning in warnings:
        left, _, rest = warning.partition(" instead (")
        assert visited[-1] in left
        visited.append(left.rsplit(": sent to ", 1)[1])
        assert rest[:-1] in VARIABLE.values()
    assert visited[-1] == final.model and len(set(visited)) == len(visited) <= 4
    # The model reached fails no rule whose setting would send it to a model not yet visited.
    for rule, target in targets.items():
        if target is not None and unmet(rule, args, final):
            assert registry.choose(None, target, configured).model in visited


def test_a_subscription_is_never_rerouted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    registry, settings = load_registry(), load_settings()
    args = call(True, True, 10)
    agent = registry.choose("claude-code", None, settings)
    assert reroute(args.conversation(), agent, registry, settings, lambda: build_request(args, agent.model)[0]) == (
        agent,
        [],
    )


def test_a_plain_call_builds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without media and without a long-context model, the request is never built for the rule."""
    monkeypatch.setenv("COLIBRI_VISION_MODEL", "gemini-flash")
    monkeypatch.setenv("COLIBRI_DOCUMENTS_MODEL", "sonnet")
    registry, settings = load_registry(), load_settings()
    deepseek = registry.choose(None, "deepseek-chat", settings)

    def build() -> Any:
        raise AssertionError("built")

    assert reroute(call(False, False, 10).conversation(), deepseek, registry, settings, build) == (deepseek, [])


# -- the config file's [routing] -------------------------------------------------------------------------


def write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    monkeypatch.setenv("COLIBRI_CONFIG", str(path))


def test_the_routing_table_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, monkeypatch, '[routing]\nvision = "gemini-flash"\nlong_context = "gemini-pro"\n')
    assert dict(load_registry().routing) == {"vision": "gemini-flash", "long_context": "gemini-pro"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[routing]\nimages = "gemini-flash"\n', "[routing]: known keys are vision, documents, long_context"),
        ("[routing]\nvision = 3\n", '[routing]: each entry must be `<key> = "<model>"`'),
        ('[routing]\nvision = ""\n', '[routing]: each entry must be `<key> = "<model>"`'),
        ('routing = "gemini-flash"\n', "[routing]: known keys are"),
        ('[routes]\nvision = "x"\n', "unknown table(s) routes (known: providers, aliases, fallback, routing)"),
    ],
)
def test_a_malformed_routing_table_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, problem: str
) -> None:
    write_config(tmp_path, monkeypatch, text)
    with pytest.raises(ColibriError) as raised:
        load_registry()
    assert raised.value.kind == "CONFIG_ERROR" and problem in raised.value.message
