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
