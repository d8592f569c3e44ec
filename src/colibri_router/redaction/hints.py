"""The cheap pre-filter: whether a text could hold a credential at all, in one regex search.

Every log line is redacted, and nearly none holds anything token-like, so the detector (dozens of
patterns) runs only on a text this finds a hint in. It must find one in everything the detector and
the shapes catch; tests/unit/test_redaction_corpus.py checks it on every sample of the corpus. A hint
is either a word every secret-named assignment and context-bound shape holds (``key``, ``pass``,
``secret``, ``auth``, ``bearer``, ``private``...), an ``@`` (a password in a URL), a prefix of a
short shape (``sk-``), or a run of 20 token characters: every prefixed token and every provider's key
is at least that long, so no list of prefixes has to follow the registry.

Searched on the case-folded text, so that letters an ignore-case pattern would match but that fold to
others (the Kelvin sign, the long s, the Turkish dotless i) are seen as the detector sees them.
"""

from __future__ import annotations

import re

_HINTS = re.compile(
    r"key|pass|pwd|secret|contrase|token|auth|bearer|private|putty|cloudant|softlayer|ibm|sk-|@"
    r"|[a-z0-9_\-+/=.]{20}"
)


def may_hold_secret(text: str) -> bool:
    """False only where neither the detector nor a shape can match."""
    return _HINTS.search(text.casefold()) is not None
