"""The one ``reasoning`` control (off | low | medium | high) mapped onto what a model takes.

Wires that send an effort level (``reasoning_effort`` on the OpenAI wire) ask here which level to
send; a model that cannot honour the request still gets the call, with a warning saying what was sent.
"""

from __future__ import annotations

from colibri_router.conversation import Reasoning
from colibri_router.providers.profiles import ModelProfile

_ORDER = ("none", "minimal", "low", "medium", "high")


def effort_for(requested: Reasoning, model: str, profile: ModelProfile) -> tuple[str | None, str | None]:
    """``(effort to send or None, warning or None)`` for a model described by ``profile``."""
    levels = profile.effort_levels
    if not levels:
        if requested == "off" and profile.reasoning_always_on:
            return None, f"reasoning off: {model} always reasons and cannot switch it off; sent nothing"
        if requested != "off" and not profile.reasoning_always_on:
            return None, f"reasoning {requested}: {model} takes no reasoning control; sent nothing"
        return None, None
    wanted = "none" if requested == "off" else requested
    if wanted in levels:
        return wanted, None
    # The nearest level the model takes: its lowest for "off"; else the closest level that still
    # reasons, the higher one on a tie (Mistral's none/high gives high for low and medium).
    rank = _ORDER.index(wanted)
    reasoning_levels = [level for level in levels if level != "none"] or list(levels)
    chosen = (
        levels[0]
        if wanted == "none"
        else min(reasoning_levels, key=lambda level: (abs(_ORDER.index(level) - rank), -_ORDER.index(level)))
    )
    return chosen, f"reasoning {requested}: {model} does not take {wanted!r}; sent reasoning_effort {chosen!r}"
