"""The cheap pre-filter: whether a text could hold a credential at all.

Every log line is redacted, and nearly none holds anything token-like, so the detector (dozens of
patterns) runs only on a text this finds a hint in. It must find one in everything the detector and
the shapes catch; tests/unit/test_redaction_corpus.py checks it on every sample of the corpus. A hint
is either a word every secret-named assignment and context-bound shape holds (``key`` is in every
private-key header and every ``api_key``-like name; ``pass``, ``secret``, ``auth``, ``bearer``...),
an ``@`` (a password in a URL), the prefix of a short shape (``sk-``), or a run of 20 letters,
digits, ``_`` or ``-``: every prefixed token and every provider's key holds one (a JWT's header,
each part of a Discord token), so no list of prefixes has to follow the registry. Not ``/`` or
``.``: a URL or a dotted name is no token, and the base64 secrets (AWS, Azure, Docker) come with a
word (``key``, ``auth``).

Searched on the case-folded text, so that letters an ignore-case pattern would match but that fold to
others (the Kelvin sign, the long s, the Turkish dotless i) are seen as the detector sees them. The
words are substring tests (no function call each); the run is one anchored match that steps over
shorter runs without backtracking (possessive quantifiers), so its cost grows with the text's length
only.
"""

from __future__ import annotations

import re

_WORDS = ("key", "pass", "pwd", "secret", "auth", "bearer", "sk-", "@", "contrase")
_RUN = re.compile(r"(?:[a-z0-9_\-]{0,19}+[^a-z0-9_\-]++)*+[a-z0-9_\-]{20}")


def may_hold_secret(text: str) -> bool:
    """False only where neither the detector nor a shape can match."""
    folded = text.casefold()
    for word in _WORDS:
        if word in folded:
            return True
    return _RUN.match(folded) is not None


# Log lines: the same words, the prefixes of the token kinds whose random part may hold ``-`` or
# ``_``, and a run of 20 letters and digits alone, so that a model name such as
# ``kimi-k2-0905-preview`` (in every call's log line) is no hint.
_LINE_WORDS = (*_WORDS, "pypi-", "glpat-", "aiza", "tgp_", "xox", "eyj", "hooks.")
_LINE_RUN = re.compile(r"(?:[a-z0-9]{0,19}+[^a-z0-9]++)*+[a-z0-9]{20}")


def log_line_may_hold_secret(text: str) -> bool:
    """The log path's pre-filter: narrower than :func:`may_hold_secret` (a token of random letters,
    digits, ``-`` and ``_`` with no prefix listed here, such as a Discord token, is seen only when it
    holds 20 letters and digits in a row), as a log line is redacted on every call and an error
    reaches the log already redacted in full."""
    folded = text.casefold()
    for word in _LINE_WORDS:
        if word in folded:
            return True
    return _LINE_RUN.match(folded) is not None
