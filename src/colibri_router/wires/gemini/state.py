"""The opaque per-part state Gemini needs back unchanged: a call's ``id`` and ``thoughtSignature``.

Both ride on our parts as a :class:`ProviderState` of wire ``gemini`` (so a host that appends the
result's ``message`` as is replays them), and only this wire reads them back: another provider's
state never reaches Gemini, and Gemini's never reaches another provider.
"""

from __future__ import annotations

from colibri_router.conversation import ProviderState

WIRE = "gemini"
ID = "id"
SIGNATURE = "thought_signature"
# Documented escape hatch for a function call Gemini did not sign itself (another provider's turn, a
# compacted history): Gemini 3 answers 400 when the first call of a step comes back unsigned.
SKIP_SIGNATURE = "skip_thought_signature_validator"


def gemini_state(call_id: str | None, signature: str | None) -> ProviderState | None:
    values = {key: value for key, value in ((ID, call_id), (SIGNATURE, signature)) if value}
    return ProviderState(WIRE, values) if values else None


def signature_of(state: ProviderState | None) -> str | None:
    return state.get(WIRE, SIGNATURE) if state is not None else None


def call_id_of(state: ProviderState | None) -> str | None:
    """The ``id`` Gemini issued with a call; None for calls Gemini 2.x made and for other providers'."""
    return state.get(WIRE, ID) if state is not None else None
