"""Context: input the router gathers from the user's machine for ``router_call``'s ``files``.

Reading goes one way, shell → router → context → conversation: this package reads the workspace
(:mod:`.paths`: globs, directories, confinement over HTTP; :mod:`.walk` and :mod:`.ignore`: bounded
walks under git's ignore rules; :mod:`.secrets`: credential stores and private keys;
:mod:`.reading`: limits, binary files, redaction, line numbers) and hands back neutral conversation
parts. Codecs
never touch the disk. Everything here runs before anything is sent, so every refusal costs nothing.
"""

from __future__ import annotations

from colibri_router.context.paths import WalkLimits, expand, http_place, local_place
from colibri_router.context.reading import FileRead, Limits, Reading, estimate_tokens, read_all
from colibri_router.settings import Settings, comma_list

# Without a known context window and without COLIBRI_CONTEXT_MAX_TOKENS.
DEFAULT_CONTEXT_TOKENS = 100_000

__all__ = ["DEFAULT_CONTEXT_TOKENS", "FileRead", "Reading", "estimate_tokens", "gather"]


def gather(entries: list[str], settings: Settings, *, over_http: bool = False) -> Reading:
    """Read ``entries`` (paths, globs, directories) as ``settings`` say; blocking file I/O, so async
    callers run it in a worker thread. Raises INVALID_REQUEST for whatever must not be sent."""
    place = http_place(settings.http_files_root) if over_http else local_place(settings.workspace)
    allow = tuple(comma_list(settings.files_allow))
    found, warnings = expand(entries, place, WalkLimits(settings.files_max_entries, settings.files_max_seconds, allow))
    reading = read_all(found, Limits(settings.file_max_bytes, allow))
    reading.warnings[:0] = warnings
    return reading
