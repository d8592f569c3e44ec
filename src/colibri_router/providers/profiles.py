"""Model profiles: quirks of a model family, applied on ANY provider that serves the model.

A profile is chosen by the model's name alone (its last path segment, so ``moonshotai/Kimi-K2.6``
on OpenRouter and ``accounts/fireworks/models/kimi-k2p6`` on Fireworks are both Kimi). Codecs
consult it; it never knows the host. The rules: docs/providers.md ("Model rules follow the model").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from colibri_router.media.support import UNKNOWN, MediaSupport, media_support
from colibri_router.providers.model_names import KIMI_SEGMENT
from colibri_router.providers.spec import MaxTokensField

IdRule: TypeAlias = Literal["k2", "mistral9"]

_KIMI = re.compile(KIMI_SEGMENT, re.I)
# K2.5 and later reason and must get their reasoning back on tool-call turns: k2.5/k2p5/k2-5 … k3.
_KIMI_REASONING_VERSION = re.compile(r"k(?:2[-_.p]?[5-9](?![0-9])|[3-9](?![0-9]))", re.I)
# OpenAI models that always reason: no sampling parameters, `max_completion_tokens`
# (https://platform.openai.com/docs/guides/reasoning). gpt-5-chat
# does not reason; every other gpt-5 name and the o-series do (by default or always).
_OPENAI_REASONING = re.compile(r"(?:o\d+(?:-.*)?|gpt-5(?!-chat).*)", re.I)
# `reasoning_effort` values per OpenAI reasoning family, lowest first: gpt-5.1 and later mainline
# models take "none"; the original gpt-5 family's lowest is "minimal"; the o-series and -pro/-codex
# variants start at "low".
_EFFORTS_WITH_NONE = re.compile(r"gpt-5\.\d+(?:-mini|-nano)?", re.I)
_EFFORTS_WITH_MINIMAL = re.compile(r"gpt-5(?:-mini|-nano)?", re.I)
# Mistral's adjustable reasoning takes only "none" and "high"; magistral always reasons
# (https://docs.mistral.ai/capabilities/reasoning/).
_MISTRAL_ADJUSTABLE = re.compile(r"mistral-(?:small|medium)-(?:latest|2603|2604|3[-.]5).*", re.I)
_MAGISTRAL = re.compile(r"magistral-.*", re.I)
# Mistral's own families and mistral-common tokenizers: tool-call ids of exactly 9
# alphanumerics (Mistral answers 400 code 3280 otherwise: https://github.com/mistralai/mistral-common).
_MISTRAL = re.compile(r"(?:mistral|magistral|codestral|devstral|ministral|open-mistral|open-mixtral)-.*", re.I)

KIMI_MAX_TOOLS = 128  # Moonshot's documented limit


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """The rules a model family brings; the defaults are "no quirk"."""

    family: str = "default"
    ids: IdRule | None = None  # None: the wire's own ID rule
    forced_tool_choice: bool = True  # False: `required`/named become auto plus a user nudge
    replays_reasoning: bool = False  # assistant tool-call turns must carry their reasoning back
    parses_markers: bool = False  # tool calls may arrive as K2 marker text in content
    max_temperature: float | None = None
    max_tools: int | None = None
    sampling: bool = True  # False: temperature is dropped with a warning
    max_tokens_field: MaxTokensField | None = None  # the field when the host does not insist
    reasoning_always_on: bool = False  # `reasoning: off` cannot be honoured
    sends_reasoning: bool = False  # history's reasoning goes back upstream when present
    effort_levels: tuple[str, ...] = ()  # `reasoning_effort` values the model takes, lowest first
    thinking_budget: bool = True  # takes Anthropic's `thinking: {budget_tokens}` on the Anthropic wire
    media: MediaSupport = UNKNOWN  # whether it reads images and PDFs (media/support.py)


DEFAULT_PROFILE = ModelProfile()


def model_segment(model: str) -> str:
    """The last path segment of a model name, without OpenRouter's ``~`` alias marker:
    ``accounts/fireworks/models/kimi-k2p6`` → ``kimi-k2p6``."""
    return model.rsplit("/", 1)[-1].lstrip("~")


def is_kimi_model(model: str) -> bool:
    return _KIMI.match(model_segment(model)) is not None


def is_kimi_reasoning_model(model: str) -> bool:
    segment = model_segment(model)
    return "thinking" in segment.lower() or _KIMI_REASONING_VERSION.search(segment) is not None


@functools.lru_cache(maxsize=256)
def profile_for(model: str) -> ModelProfile:
    """The profile of ``model``'s family (cached: a name always has the same profile)."""
    profile = _family_profile(model)
    media = media_support(model_segment(model))
    return profile if media == UNKNOWN else replace(profile, media=media)


def _family_profile(model: str) -> ModelProfile:
    segment = model_segment(model)
    if is_kimi_model(model):
        reasoning = is_kimi_reasoning_model(model)
        return ModelProfile(
            family="kimi",
            ids="k2",
            forced_tool_choice=False,
            replays_reasoning=reasoning,
            parses_markers=True,
            max_temperature=1.0,
            max_tools=KIMI_MAX_TOOLS,
            reasoning_always_on=reasoning,
            sends_reasoning=True,
            thinking_budget=False,
        )
    if _OPENAI_REASONING.fullmatch(segment):
        return ModelProfile(
            family="openai-reasoning",
            sampling=False,
            max_tokens_field="max_completion_tokens",
            effort_levels=_openai_efforts(segment),
        )
    if _MISTRAL.fullmatch(segment):
        adjustable = _MISTRAL_ADJUSTABLE.fullmatch(segment) is not None
        return ModelProfile(
            family="mistral",
            ids="mistral9",
            effort_levels=("none", "high") if adjustable else (),
            reasoning_always_on=_MAGISTRAL.fullmatch(segment) is not None,
        )
    return DEFAULT_PROFILE


def _openai_efforts(segment: str) -> tuple[str, ...]:
    if _EFFORTS_WITH_NONE.fullmatch(segment):
        return ("none", "low", "medium", "high")
    if _EFFORTS_WITH_MINIMAL.fullmatch(segment):
        return ("minimal", "low", "medium", "high")
    return ("low", "medium", "high")
