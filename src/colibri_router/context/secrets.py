"""What ``files`` never sends unless the user allows it in ``COLIBRI_FILES_ALLOW``.

- Credential stores, by path: the well-known places of :mod:`.credentials` (SSH and GnuPG keys,
  netrc, cloud CLIs, package registries, password stores, ``.env`` files...), a file in one of
  those directories included.
- Private keys, by content, whatever the file is called: PEM and OpenSSH ``-----BEGIN ... PRIVATE
  KEY-----`` blocks (PGP and SSH2 too), PuTTY key files, age identities.
- In a walk, the home directory's hidden files and folders (``~/.bashrc`` and the like export
  tokens; ``files: ["~"]`` must not send them). Named one by one they are read, unless they are
  one of the above.

A file named explicitly is refused with ``INVALID_REQUEST``; a glob or a directory leaves it out with
a warning. Text that merely looks like a key inside a file sent is redaction's business
(:mod:`colibri_router.redaction`), not this module's.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePath

from colibri_router.context.credentials import CREDENTIAL_STORES
from colibri_router.context.wildmatch import translate

HIDDEN_IN_HOME = "is hidden in the home directory"
PRIVATE_KEY = "holds a private key"

# The markers that open a private key: PEM (RFC 7468 labels such as RSA, EC, ENCRYPTED, OPENSSH,
# and the PGP armour's "PGP PRIVATE KEY BLOCK"), the SSH2 (RFC 4716-style) form, PuTTY's .ppk
# header, and age's identity encoding.
_PRIVATE_KEY = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    rb"|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"
    rb"|PuTTY-User-Key-File-\d+:"
    rb"|AGE-SECRET-KEY-1[0-9A-Z]{58}"
)


def refusal(path: Path, shown: str, allow: Sequence[str], scan_bytes: int) -> str | None:
    """Why the file at ``path`` is not sent (a phrase to follow its name), or None to send it.
    Its first ``scan_bytes`` bytes are read for a private key."""
    if allowed(path, shown, allow):
        return None
    store = credential_store(path)
    if store is not None:
        return f"looks like a secret ({store})"
    return PRIVATE_KEY if holds_private_key(path, scan_bytes) else None


def credential_store(path: Path, *, directory: bool = False, through_links: bool = True) -> str | None:
    """What the credential store ``path`` is or lies in holds (``"SSH keys"``), or None; also where
    its symlinks lead, unless ``through_links`` is False (a walk, which follows none). File-name
    patterns do not apply to a ``directory`` (a package called ``credentials/`` is code)."""
    names, paths = _matchers()
    found = []  # the earliest entry wins: the list goes from the specific to the generic
    for form in _forms(path, through_links):
        name = None if directory else names.fullmatch(form.rsplit(b"/", 1)[-1])
        for match in (paths.fullmatch(form), name):
            if match is not None and match.lastgroup is not None:
                found.append(int(match.lastgroup[1:]))
    return CREDENTIAL_STORES[min(found)][1] if found else None


def holds_private_key(path: Path, scan_bytes: int) -> bool:
    try:
        with path.open("rb") as file:
            head = file.read(scan_bytes)
    except OSError:
        return False
    return _PRIVATE_KEY.search(head) is not None


def hidden_in_home(path: Path, home: Path | None = None) -> bool:
    return path.name.startswith(".") and path.parent == (home or Path.home())


def allowed(path: Path, shown: str, allow: Sequence[str]) -> bool:
    """Whether an entry of ``allow`` names ``path``: as its shown path, its absolute path or its name,
    exactly or as a pattern (``config/*.pem``); ``~`` in an entry is the home directory. An entry
    naming a directory allows what is in it."""
    if not allow:
        return False
    items = [os.path.expanduser(item) for item in allow]
    directories = [*path.parents, *PurePath(shown).parents]
    candidates = [shown, str(path), path.name, *(str(parent) for parent in directories if parent.parent != parent)]
    return any(fnmatch.fnmatchcase(candidate, item) for item in items for candidate in candidates)


def _forms(path: Path, through_links: bool) -> list[bytes]:
    """``path`` as the matchers see it: lower-cased, absolute and normalised, also through its
    symlinks, and below ``$XDG_CONFIG_HOME`` also as under ``.config``."""
    plain = os.path.normpath(os.path.abspath(path))
    forms = {plain, os.path.realpath(path)} if through_links else {plain}
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        for form in list(forms):
            relative = os.path.relpath(form, xdg)
            if not relative.startswith(".."):
                forms.add("/.config/" + relative)
    return [os.fsencode(form.lower().replace(os.sep, "/")) for form in sorted(forms)]


@functools.cache
def _matchers() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """One regex for name patterns (over a name) and one for path patterns (over a whole path);
    the capturing group that matched says which entry, and so what the store holds."""
    names: list[bytes] = []
    paths: list[bytes] = []
    for index, (pattern, _what) in enumerate(CREDENTIAL_STORES):
        group = f"(?P<s{index}>".encode()
        if "/" not in pattern:
            names.append(group + translate(pattern) + b")")
        elif pattern.endswith("/"):
            paths.append(group + rb"(?:.*/)?" + translate(pattern[:-1]) + rb"(?:/.*)?)")
        else:
            paths.append(group + rb"(?:.*/)?" + translate(pattern) + b")")
    return _alternation(names), _alternation(paths)


def _alternation(sources: list[bytes]) -> re.Pattern[bytes]:
    return re.compile(b"|".join(sources), re.DOTALL)
