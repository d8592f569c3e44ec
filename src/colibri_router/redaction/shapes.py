"""The shapes detect-secrets lacks, each a named regex: the providers' key shapes (registry data), and a
few formats its plugins miss or only half catch.

- A private key: its plugin reports the ``BEGIN ... PRIVATE KEY`` line alone, which would leave the
  key itself in the text; the whole block goes (also inside JSON, as a Google service-account file
  holds it, and to the end of the text when the block is cut short).
- GitHub's fine-grained ``github_pat_`` tokens (its GitHub plugin knows the ``gh?_`` ones only), and
  an ``npm_`` token outside an ``.npmrc`` line (its npm plugin wants the ``_authToken=`` around it).
- A password in a URL with no user name (``redis://:password@host``).
- A Docker config's ``"auth"``: base64 of ``user:token``.
- An AWS secret access key written unquoted (``aws_secret_access_key = ...``, as in
  ``~/.aws/credentials``): the plugin wants quotes.
- The three shapes this module had before it used a detector: ``sk-`` keys, ``Bearer`` tokens and
  ``x-api-key`` values, as an upstream's error may quote them.
- Every provider's key shape: ``key_pattern`` on its registry entry.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

# The shapes this module had before the detector (kept: an upstream's error quotes keys this way).
SECRET_PATTERNS = re.compile(
    r"(?i)(sk-[A-Za-z0-9_\-]{8,}|bearer\s+[A-Za-z0-9._\-]{8,}|x-api-key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._\-]{8,})"
)

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)",
    re.DOTALL,
)


class Shape(NamedTuple):
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the part of a match that is the secret


# Matched over the whole text, before the line-by-line detector (a block spans lines).
BLOCKS = (Shape("private key", _PRIVATE_KEY),)

_FIXED = (
    Shape("GitHub token", re.compile(r"github_pat_[A-Za-z0-9_]{30,}")),
    Shape("npm token", re.compile(r"npm_[A-Za-z0-9]{36}")),
    # A password after an empty user name (``redis://:password@host``): the URL plugin wants a user.
    Shape("password in URL", re.compile(r"(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://:([^\s:/?#\[\]@]+)@"), 1),
    # base64 (whole groups of four, at least twelve characters), so that `"auth": "required"` stays.
    Shape(
        "Docker auth",
        re.compile(
            r"[\"']auth[\"']\s*:\s*[\"']((?:[A-Za-z0-9+/]{4}){3,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)[\"']"
        ),
        1,
    ),
    Shape(
        "AWS key",
        re.compile(r"(?i)aws_?secret_?access_?key\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
        1,
    ),
)


@functools.cache
def line_shapes() -> tuple[Shape, ...]:
    """Ours, then every provider's key shape (the most specific first, so that an Anthropic key is
    named as one and not as an OpenAI-shaped ``sk-``), then the old three. Read from the registry
    on first use, not at import (the registry imports the error tree, which imports this)."""
    # Not at import: the registry imports the error tree, which imports this.
    from colibri_router.providers.builtin import BUILTIN_PROVIDERS

    shaped = [spec for spec in BUILTIN_PROVIDERS if spec.key_pattern]
    shaped.sort(key=lambda spec: _specificity(spec.key_pattern or ""))
    providers: list[Shape] = []
    seen: set[str] = set()
    for spec in shaped:
        pattern = spec.key_pattern or ""
        if pattern not in seen:
            seen.add(pattern)
            providers.append(Shape(f"{spec.name} key", re.compile(pattern)))
    return (*_FIXED, *providers, Shape("API key", SECRET_PATTERNS))


def _specificity(pattern: str) -> tuple[int, bool]:
    """Longer literal prefix first (``sk-ant-`` before ``sk-``); among equal prefixes, a fixed length
    (DeepSeek's 32 hex digits) before an open one (``{40,}``)."""
    match = re.match(r"[A-Za-z0-9_\-]*", pattern)
    return -len(match.group() if match else ""), "," in pattern
