"""Redaction: no credential reaches a model, a log line, a result, an error, a thread or the ledger.

:func:`redact` is used by the error tree (which scrubs errors an upstream built from text echoing
a key or a token), :func:`redact_log` by the logging processors, :func:`scan` by file reading, which
also names the kinds it found for its warning. Both replace, with ``[redacted]``:

- this machine's key values (every provider's key variable that is set), whatever their shape;
- what detect-secrets' plugins catch (:mod:`.detector`), and the shapes they lack, the registry's
  provider key shapes among them (:mod:`.shapes`).

The detector runs only on text the pre-filter (:mod:`.hints`) finds a hint in, and only on the lines
that hold one; log lines have a narrower pre-filter, so that every call's own line (a model name, token
counts) stays as cheap as it was.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from colibri_router.environment import values_of
from colibri_router.redaction.hints import log_line_may_hold_secret, may_hold_secret

__all__ = ["REDACTED", "Scan", "key_variables", "redact", "redact_log", "scan"]

REDACTED = "[redacted]"
_KNOWN = "configured API key"  # the kind of a key variable's value found in the text


@dataclass(frozen=True, slots=True)
class Scan:
    """A text with every credential replaced, and the kinds found (in order of first sight, each once)."""

    text: str
    kinds: tuple[str, ...]


@functools.cache
def key_variables() -> frozenset[str]:
    """Every built-in provider's key variable. Read from the registry on first use, not at import:
    this leaf is imported by the error tree, which the registry itself imports."""
    # Not at import: an import circle (see the docstring).
    from colibri_router.providers.builtin import BUILTIN_PROVIDERS

    return frozenset(name for spec in BUILTIN_PROVIDERS for name in spec.key_envs)


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every known key value (``secrets`` and the key variables') and every
    credential-shaped token replaced."""
    text, _ = _known(text, secrets)
    if not may_hold_secret(text):
        return text
    return _detect(text, None).text


def redact_log(text: str) -> str:
    """:func:`redact` for a log line's value, behind the log path's narrower pre-filter: a value
    with nothing token-like in it (as every call's own line) costs one regex match more than the
    replacement of the known values."""
    text, _ = _known(text, ())
    if not log_line_may_hold_secret(text):
        return text
    return _detect(text, None).text


def scan(text: str, name: str | None = None) -> Scan:
    """:func:`redact` for a file's text, naming the kinds found. ``name`` (the file's name) tells the
    detector how to read secret-named assignments: quoted in code, unquoted in a config file."""
    text, found = _known(text, ())
    if not may_hold_secret(text):
        return Scan(text, (_KNOWN,) if found else ())
    result = _detect(text, name)
    kinds = result.kinds if not found or _KNOWN in result.kinds else (_KNOWN, *result.kinds)
    return Scan(result.text, kinds)


def _known(text: str, secrets: tuple[str | None, ...]) -> tuple[str, bool]:
    # A variable may hold several keys separated by commas (docs/keys.md): each is known on its own.
    values = (part.strip() for value in values_of(key_variables()).values() for part in value.split(","))
    known = [secret for secret in (*secrets, *values) if secret and len(secret) >= 4]
    found = False
    # Longest first: a key that contains another key must not be left half-replaced.
    for secret in sorted(known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
            found = True
    return text, found


def _detect(text: str, name: str | None) -> Scan:
    # detect-secrets loads only when a text is scanned.
    from colibri_router.redaction.scanning import detect

    return detect(text, name)
