"""``reasoning`` → Gemini's ``generationConfig.thinkingConfig``, by model family.

Gemini 3 takes named ``thinkingLevel`` values and cannot switch thinking off (its lowest level is the closest
to off); Gemini 2.5 takes a ``thinkingBudget`` in tokens, where 0 switches thinking off on the Flash models
and Pro refuses 0 (https://ai.google.dev/gemini-api/docs/thinking). Which family takes which values is the
table below; a model it does not know gets no ``thinkingConfig``. Whatever a model cannot honour, the call
still goes out, with a warning saying what was sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from colibri_router.conversation import Reasoning
from colibri_router.providers.profiles import model_segment
from colibri_router.wires.rules import THINKING_BUDGETS

LEVELS = ("MINIMAL", "LOW", "MEDIUM", "HIGH")  # lowest first
# The same budgets `reasoning` means on every budget-based provider.


@dataclass(frozen=True, slots=True)
class Levels:
    """A Gemini 3 family: the ``thinkingLevel`` values it accepts, lowest first."""

    accepted: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Budget:
    """A Gemini 2.5 family: its smallest non-zero budget, and whether 0 (off) is accepted."""

    minimum: int
    can_disable: bool


# First match wins (full match on the model's last path segment, case-insensitive). Gemini 3 Pro takes
# LOW and HIGH; later Pros add MEDIUM; Flash from 3.7 on (and the flash alias) dropped MINIMAL.
FAMILIES: tuple[tuple[re.Pattern[str], Levels | Budget], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), rule)
    for pattern, rule in (
        (r"gemini-3-pro.*", Levels(("LOW", "HIGH"))),
        (r"gemini-3\.\d+-pro.*|gemini-pro-latest", Levels(("LOW", "MEDIUM", "HIGH"))),
        (r"gemini-3\.(?:[7-9]|\d{2,})-flash(?!-lite).*|gemini-flash-latest", Levels(("LOW", "MEDIUM", "HIGH"))),
        (r"gemini-3.*|gemini-flash-lite-latest", Levels(LEVELS)),
        (r"gemini-2\.5-pro.*", Budget(minimum=128, can_disable=False)),
        (r"gemini-2\.5-flash-lite.*", Budget(minimum=512, can_disable=True)),
        (r"gemini-2\.5-flash.*", Budget(minimum=1, can_disable=True)),
    )
)


def family_of(model: str) -> Levels | Budget | None:
    segment = model_segment(model)
    return next((rule for pattern, rule in FAMILIES if pattern.fullmatch(segment)), None)


def thinking_config(model: str, reasoning: Reasoning | None) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """The ``thinkingConfig`` for ``model`` (None: send none) and the warnings it needs. Absent
    ``reasoning`` keeps the model's own default and only asks for thought summaries."""
    family = family_of(model)
    if family is None:
        if reasoning is None:
            return None, ()
        return None, (f"reasoning {reasoning!r} not applied: no known thinking control for {model}; sent none",)
    if reasoning is None:
        return {"includeThoughts": True}, ()
    if isinstance(family, Levels):
        return _level(model, family, reasoning)
    return _budget(model, family, reasoning)


def _level(model: str, family: Levels, reasoning: Reasoning) -> tuple[dict[str, Any], tuple[str, ...]]:
    wanted = "MINIMAL" if reasoning == "off" else reasoning.upper()
    sent = _closest(wanted, family.accepted)
    config = {"includeThoughts": True, "thinkingLevel": sent}
    if reasoning == "off":
        return config, (f"{model} cannot switch thinking off: sent thinkingLevel {sent}, the lowest it takes",)
    if sent != wanted:
        return config, (f"{model} has no thinkingLevel {wanted}: sent {sent}",)
    return config, ()


def _closest(wanted: str, accepted: tuple[str, ...]) -> str:
    """``wanted`` if accepted, else the next level up, else the highest the model has."""
    rank = LEVELS.index(wanted)
    return next((level for level in accepted if LEVELS.index(level) >= rank), accepted[-1])


def _budget(model: str, family: Budget, reasoning: Reasoning) -> tuple[dict[str, Any], tuple[str, ...]]:
    if reasoning != "off":
        return {"includeThoughts": True, "thinkingBudget": max(THINKING_BUDGETS[reasoning], family.minimum)}, ()
    if family.can_disable:
        return {"thinkingBudget": 0}, ()
    config = {"includeThoughts": True, "thinkingBudget": family.minimum}
    return config, (f"{model} cannot switch thinking off: sent thinkingBudget {family.minimum}, the lowest it takes",)
