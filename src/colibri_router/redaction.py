"""Redaction: API keys never reach a log line, a result or an error message.

A leaf used by the logging processors and by the error tree (which scrubs errors an upstream built
from text echoing the key). Known key values are replaced whatever their shape, and so is anything
shaped like a credential, in case a key arrives by another route.
"""

from __future__ import annotations

import functools
import re

from colibri_router.environment import values_of

REDACTED = "[redacted]"
# Shapes of credentials that may surface in text we did not write (an upstream error echoing a key,
# an exception message quoting a header). Known key values are also replaced, whatever their shape.
_SECRET_PATTERNS = re.compile(
    r"(?i)(sk-[A-Za-z0-9_\-]{8,}|bearer\s+[A-Za-z0-9._\-]{8,}|x-api-key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._\-]{8,})"
)
# Every match holds one of these, case-folded (the pattern ignores case; "key" rather than
# "x-api-key" because the pattern's case-insensitive "i" also matches the dotted and dotless Turkish
# i, which fold to other letters). Checking them is several times cheaper than running the pattern
# over a text that has none, as nearly every log line has none.
_PATTERN_WORDS = ("sk-", "bearer", "key")


@functools.cache
def key_variables() -> frozenset[str]:
    """Every built-in provider's key variable. Read from the registry on first use, not at import:
    this leaf is imported by the error tree, which the registry itself imports."""
    from colibri_router.providers.builtin import BUILTIN_PROVIDERS

    return frozenset(name for spec in BUILTIN_PROVIDERS for name in spec.key_envs)


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every known key value and every credential-shaped token replaced."""
    known = [secret for secret in (*secrets, *values_of(key_variables()).values()) if secret and len(secret) >= 4]
    # Longest first: a key that contains another key must not be left half-replaced.
    for secret in sorted(known, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    folded = text.casefold()
    if any(word in folded for word in _PATTERN_WORDS):
        return _SECRET_PATTERNS.sub(REDACTED, text)
    return text
