"""colibri-router: one MCP tool, ``router_call``, in front of Kimi K2, Claude and the other providers.

``__version__`` is the installed package's version, read from its metadata (pyproject.toml's
``version`` is the one place it is written). It is looked up on first use rather than at import, so
importing the package stays cheap: the metadata lookup searches ``sys.path`` for the distribution.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    __version__: str

DISTRIBUTION = "colibri-router"


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version(DISTRIBUTION)
    except PackageNotFoundError:
        # Imported from a source tree that was never installed (no metadata to read): say so
        # rather than invent a version.
        found = "0+unknown"
    globals()["__version__"] = found  # later lookups find the attribute and skip this function
    return found
