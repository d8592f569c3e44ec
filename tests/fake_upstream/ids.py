"""The IDs and opaque tokens the fake issues, each in the shape its service uses.

Deterministic (a hash of a process-wide counter) so that a failing test shows the same values when it is
run again, and unique within the process so that a replayed ID can be told from a fresh one.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import string

_serial = itertools.count(1)  # next() on a count is atomic under the GIL: safe from the server's threads
_ALNUM = string.ascii_letters + string.digits
_LOWER_ALNUM = string.ascii_lowercase + string.digits


def serial() -> int:
    """A number never returned before in this process (response IDs, signatures)."""
    return next(_serial)


def _token(alphabet: str, length: int) -> str:
    digest = hashlib.sha256(f"fake-upstream:{serial()}".encode()).digest()
    return "".join(alphabet[byte % len(alphabet)] for byte in digest[:length])


def openai_call_id() -> str:
    """``call_`` and 24 letters or digits, as OpenAI issues them."""
    return "call_" + _token(_ALNUM, 24)


def mistral_call_id() -> str:
    """Exactly 9 letters or digits: the only tool-call ID shape Mistral accepts."""
    return _token(_ALNUM, 9)


def k2_call_id(name: str, index: int) -> str:
    """Kimi K2's own ``functions.{name}:{index}``."""
    return f"functions.{name}:{index}"


def cohere_call_id(name: str) -> str:
    """``{name}_`` and 12 lower-case letters or digits, as Cohere issues them."""
    return f"{name}_{_token(_LOWER_ALNUM, 12)}"


def ollama_call_id() -> str:
    """``call_`` and 8 lower-case letters or digits (Ollama 0.12.10 and later)."""
    return "call_" + _token(_LOWER_ALNUM, 8)


def gemini_call_id() -> str:
    """An opaque function-call ID as Gemini 3 issues them."""
    return _token(_LOWER_ALNUM, 8)


def thought_signature() -> str:
    """An opaque base64 token, like Gemini's ``thoughtSignature`` and Anthropic's thinking ``signature``."""
    return base64.b64encode(hashlib.sha256(f"signature:{serial()}".encode()).digest() * 2).decode()
