"""Reading a fixed set of environment variables, most of them unset, cheaply and afresh every time.

Every call reads its settings, and every log line is redacted of the providers' key variables: some
thirty-five names, nearly all unset. ``os.environ.get`` of an unset name raises and catches a
KeyError inside ``os.environ`` (about 0.5 µs each, and more on a cold cache, right after a network
round trip), so these reads cost more than the rest of a call's own work. CPython's ``os.environ``
is a view over a plain dict of encoded names and values (``_data``, which every change made through
``os.environ`` updates at once): the names set now are where the encoded names meet its keys, found
in one pass with no exception. Anything else standing in for ``os.environ`` (a test may replace it
with a dict) is read one name at a time. Nothing is cached but the encoded names: the values are read
on every call.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any


def values_of(names: frozenset[str]) -> dict[str, str]:
    """The variables among ``names`` that are set now (empty ones included), with their values."""
    environ = os.environ
    raw: Mapping[Any, Any] | None = getattr(environ, "_data", None)
    decode: Callable[[Any], str] | None = getattr(environ, "decodevalue", None)
    if raw is None or decode is None:
        return {name: value for name in names if (value := environ.get(name)) is not None}
    names_by_key = _encoded(names)
    # The intersection is one C-level pass over the smaller side: no Python-level look-up per name,
    # and most of the names are unset.
    return {names_by_key[key]: decode(raw[key]) for key in names_by_key.keys() & raw.keys()}


@functools.cache
def _encoded(names: frozenset[str]) -> dict[Any, str]:
    """The key ``os.environ`` files each name under (bytes on POSIX, upper case on Windows) → the name."""
    encode: Callable[[str], Any] = os.environ.encodekey
    return {encode(name): name for name in names}


def user_id() -> int | None:
    """The process's user id (POSIX), None where there is none (Windows): with the variables it reads,
    what a cached answer derived from the password database (the home directory, the login name)
    depends on."""
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None
