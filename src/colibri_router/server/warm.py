"""A team server's start: load now what a stdio server loads on its first call, then hide the loaded
heap from the garbage collector.

stdio defers the argument models, the router with every codec, the records and the price data to the
first call, because hosts give up on a server that is slow to answer ``initialize`` (see
:mod:`.tools`). ``serve --http`` answers many callers for hours: it loads all of that before it
listens, so that no caller's first call pays for it.

Then the heap. CPython's cyclic collector walks every object of the generations it collects, and a
full collection walks them all: a loaded server holds about 100,000 tracked objects that live as long
as the process (the registry, pydantic's validators, the price data). Under load, the objects of the
calls in flight survive young collections and keep triggering full ones, which walked the whole heap
often enough to cost about 0.4 ms of CPU per call (benchmark 9). :func:`gc.freeze` moves what is loaded
into the permanent generation, which no collection walks, and a larger young generation makes
collections rarer; together they took the collector's share to about 0.13 ms per call. Leaks are not
hidden: objects made after the freeze are collected as before.
"""

from __future__ import annotations

import gc
import importlib

# What the shell itself imports on a first call (the argument models and the call's path, see the
# function-level imports in .tools), loaded with this module; each tool's service and models are read
# from the tool table. A test makes a call after warm() and fails on any colibri_router module the
# call still had to import.
from colibri_router.server import arguments as _arguments  # noqa: F401
from colibri_router.server import calling as _calling  # noqa: F401
from colibri_router.server.table import TOOLS
from colibri_router.settings import Settings
from colibri_router.store import import_store_module

FIRST_CALL_MODULES = tuple(dict.fromkeys(module for entry in TOOLS for module in entry.modules))
# Objects allocated (less those freed) before a young collection; CPython's default is 700. A call
# in flight holds a few hundred, so with the default most collections find them all still alive.
YOUNG_GENERATION_THRESHOLD = 10_000


def warm(settings: Settings) -> None:
    """Import everything a first call would, and load the price data."""
    for name in FIRST_CALL_MODULES:
        importlib.import_module(name)
    import_store_module(settings)
    from genai_prices import data_snapshot

    data_snapshot.get_snapshot()


def freeze_heap() -> None:
    """Collect once, then put every object that survives out of the collector's reach for good."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, oldest)


def prepare_to_serve(settings: Settings) -> None:
    """Both, in the process that will serve (each worker its own)."""
    warm(settings)
    freeze_heap()
