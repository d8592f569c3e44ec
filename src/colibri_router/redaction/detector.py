"""detect-secrets' plugins, run in process on a line of text: where each credential they know sits.

Yelp's detect-secrets is a set of detectors, one plugin per token kind (AWS, GitHub, GitLab, npm,
PyPI, Stripe, Slack, Discord, JWT, private keys, passwords in URLs, secret-named assignments...). Its
last release (1.5.0) is of May 2024; Bridgecrew's fork (bc-detect-secrets, released monthly) lacks its
GitLab, PyPI and OpenAI plugins, so we use Yelp's. We use every plugin it ships except three: the two
high-entropy ones (they take every hash, checksum and lock-file digest for a key: see
benchmarks/redaction.py) and public IP addresses (not a credential). A new plugin in a later release
is used without a change here.

Only the plugins' ``analyze_string`` is called: their ``verify`` (which would send a found token to
its service to check it) never runs, so nothing leaves the machine. Imported on first use only:
detect-secrets brings ``requests`` and ``multiprocessing`` (about 0.3 s), which a call that never
meets key-shaped text must not pay.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

# Plugins left out (by their secret_type, detect-secrets' own name for a plugin), and why above.
_LEFT_OUT = frozenset({"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"})
_KEYWORD = "Secret Keyword"

# detect-secrets' names → the words a warning uses (a kind not listed keeps detect-secrets' name).
KIND_NAMES = {
    "AWS Access Key": "AWS key",
    "Azure Storage Account access key": "Azure storage key",
    "Basic Auth Credentials": "password in URL",
    "Discord Bot Token": "Discord token",
    "GitHub Token": "GitHub token",
    "GitLab Token": "GitLab token",
    "JSON Web Token": "JWT",
    "NPM tokens": "npm token",
    "OpenAI Token": "openai key",
    "Private Key": "private key",
    "PyPI Token": "PyPI token",
    "Secret Keyword": "password or key",
    "Slack Token": "Slack token",
    "Stripe Access Key": "Stripe key",
    "Telegram Bot Token": "Telegram token",
    "Twilio API Key": "Twilio key",
    "SendGrid API Key": "SendGrid key",
}

# Every word of the secret-named-assignment plugin's list holds one of these (api_key, db_pass,
# passwd, pwd, secret, contraseña...): its patterns cost hundreds of microseconds a line, so they
# run only on a line that holds one (ignoring case as they do).
_KEYWORD_WORDS = re.compile(r"key|pass|pwd|secret|contrase", re.IGNORECASE)

# A plugin may report only part of a token (GitLab's reports the prefix its pattern captures): a
# report is widened over the token characters that follow it.
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")


class Hit(NamedTuple):
    start: int
    end: int
    kind: str


class Detector:
    """The plugins, made once. ``keyword_groups`` picks how the secret-named-assignment plugin reads a
    line (quotes required, as in code; or not, as in a config file): detect-secrets' own choice by
    file type."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins import keyword

        plugins: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
        self._plugins = [
            (KIND_NAMES.get(kind, kind), cls())
            for kind, cls in sorted(plugins.items())
            if kind not in _LEFT_OUT and kind != _KEYWORD
        ]
        self._keyword = keyword.KeywordDetector()
        self._keyword_kind = KIND_NAMES[_KEYWORD]
        self._quoted: dict[Any, int] = keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
        self._config: dict[Any, int] = keyword.CONFIG_DENYLIST_REGEX_TO_GROUP
        self._by_type: dict[Any, dict[Any, int]] = keyword.REGEX_BY_FILETYPE
        # detect-secrets' own filters for a secret-named assignment that holds no secret:
        # `password = get_password()`, `${SECRET}`, `<token>`, `"$VAR"`, `"abcdef"`.
        self._false: tuple[Callable[[str], bool], ...] = (
            heuristic.is_templated_secret,
            heuristic.is_prefixed_with_dollar_sign,
            heuristic.is_sequential_string,
            heuristic.is_not_alphanumeric_string,
        )
        self._indirect: Callable[[str], bool] = heuristic.is_indirect_reference
        from detect_secrets.util.filetype import FileType, determine_file_type

        self._file_type: Callable[[str], Any] = determine_file_type
        self._other = FileType.OTHER

    def keyword_groups(self, name: str | None) -> tuple[dict[Any, int], ...]:
        """How secret-named assignments are read in a file called ``name``: code by its language's
        rules; any other file, and text that is no file (an error, a log line), as config (unquoted
        values, ``MISTRAL_API_KEY=...``) and as code."""
        kind = self._other if name is None else self._file_type(name)
        if kind == self._other:
            return (self._config, self._quoted)
        return (self._by_type.get(kind, self._quoted),)

    def hits(self, text: str) -> Iterator[Hit]:
        """What the plugins of a token kind find in ``text`` (a line: a value found is replaced
        wherever it appears in it)."""
        for kind, plugin in self._plugins:
            for value in plugin.analyze_string(text):
                yield from _places(text, value, kind)

    def keyword_hits(self, text: str, keyword_groups: tuple[dict[Any, int], ...]) -> Iterator[Hit]:
        """What the secret-named-assignment plugin finds (``api_key="..."``), line by line as
        detect-secrets reads it, on the lines that hold one of its words only."""
        done = -1
        for word in _KEYWORD_WORDS.finditer(text):
            if word.start() < done:
                continue
            start = text.rfind("\n", 0, word.start()) + 1
            done = text.find("\n", word.end())
            done = len(text) if done < 0 else done
            line = text[start:done]
            for hit in self._line_keyword_hits(line, keyword_groups):
                yield Hit(hit.start + start, hit.end + start, hit.kind)

    def _line_keyword_hits(self, line: str, keyword_groups: tuple[dict[Any, int], ...]) -> Iterator[Hit]:
        for groups in keyword_groups:
            for value in self._keyword.analyze_string(line, denylist_regex_to_group=groups):
                # detect-secrets applies its indirect-reference filter to the whole line, which
                # would let `said: Client(api_key="...")` through; here it judges the value alone.
                if value and not any(check(value) for check in self._false) and not self._indirect(f"_={value}"):
                    yield from _places(line, value, self._keyword_kind)


def _places(line: str, value: str, kind: str) -> Iterator[Hit]:
    if not value:
        return
    start = line.find(value)
    while start >= 0:
        end = start + len(value)
        tail = _TOKEN_TAIL.match(line, end)
        end = tail.end() if tail else end
        yield Hit(start, end, kind)
        start = line.find(value, end)


@functools.cache
def detector() -> Detector:
    return Detector()
