"""Secret-looking paths: refused unless the user allows them in ``COLIBRI_FILES_ALLOW``."""

from __future__ import annotations

import fnmatch
from pathlib import Path

# Matched against the file's name, case-insensitively.
SECRET_NAMES = (".env*", "*.pem", "*.key", "id_rsa*", "*credentials*")


def looks_secret(path: Path) -> bool:
    name = path.name.lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_NAMES)


def allowed(path: Path, shown: str, allow: list[str]) -> bool:
    """Whether an entry of ``allow`` names ``path``: as its shown path, its absolute path or its name,
    exactly or as a pattern (``config/*.pem``)."""
    candidates = (shown, str(path), path.name)
    return any(fnmatch.fnmatchcase(candidate, item) for item in allow for candidate in candidates)
