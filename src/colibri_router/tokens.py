"""Bearer tokens for ``serve --http``: a file of ``name:sha256-hex`` lines (``COLIBRI_HTTP_TOKENS_FILE``).

The file holds only the SHA-256 of each token, so reading it gives nobody a token. ``colibri-router
token add NAME`` makes a token, prints it once and appends its hash. Blank lines and lines starting
with ``#`` are ignored. The file is read again whenever it changes, so adding or removing a line
takes effect on the next request, without a restart.

The name is the caller: it goes into every ledger row and thread as the ``principal``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from colibri_router.errors import ConfigError

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
_HASH_PATTERN = re.compile(r"[0-9a-f]{64}")
TOKEN_BYTES = 32  # 256 bits of randomness


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class TokenEntry:
    name: str
    sha256: str


def parse_tokens(text: str, source: str) -> list[TokenEntry]:
    """The entries of a tokens file; a malformed line is a :class:`ConfigError` naming it."""
    entries: list[TokenEntry] = []
    names: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, digest = line.partition(":")
        name, digest = name.strip(), digest.strip().lower()
        if not NAME_PATTERN.fullmatch(name) or not _HASH_PATTERN.fullmatch(digest):
            raise ConfigError(f"{source} line {number}: expected name:sha256-hex (64 hex digits)")
        if name in names:
            raise ConfigError(f"{source} line {number}: the name {name!r} appears twice")
        names.add(name)
        entries.append(TokenEntry(name, digest))
    return entries


class TokensFile:
    """The tokens file at ``path``, read again when its modification time or size changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._entries: list[TokenEntry] = []

    def entries(self) -> list[TokenEntry]:
        try:
            status = self.path.stat()
            stamp = (status.st_mtime_ns, status.st_size)
            if stamp != self._stamp:
                self._entries = parse_tokens(self.path.read_text(encoding="utf-8"), str(self.path))
                self._stamp = stamp
        except OSError as error:
            raise ConfigError(f"COLIBRI_HTTP_TOKENS_FILE {str(self.path)!r} cannot be read: {error.strerror}") from None
        return self._entries

    def name_of(self, token: str) -> str | None:
        """The name the token was issued to, or None. Every entry is compared in constant time, so
        the answer's timing says nothing about which hashes exist."""
        digest = token_hash(token)
        found = None
        for entry in self.entries():
            if hmac.compare_digest(entry.sha256, digest):
                found = entry.name
        return found


def add_token(path: Path, name: str) -> str:
    """Make a token for ``name``, append its hash to the file (created readable by its owner only)
    and return the token: the only time it exists in clear."""
    if not NAME_PATTERN.fullmatch(name):
        raise ConfigError(f"invalid token name {name!r}: 1-64 characters, letters, digits and . _ @ + - (not first)")
    existing = TokensFile(path).entries() if path.exists() else []
    if any(entry.name == name for entry in existing):
        raise ConfigError(f"{str(path)!r} already has a token named {name!r}: remove its line first")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(descriptor, "a", encoding="utf-8") as file:
        if path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            file.write("\n")
        file.write(f"{name}:{token_hash(token)}\n")
    return token
