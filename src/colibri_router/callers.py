"""Who is calling: the principal a call is recorded for, and whether they may read everyone's records.

Over stdio the caller is the local user. Over HTTP it is the name of the bearer token the request
carried (``COLIBRI_HTTP_TOKENS_FILE``), an administrator when that name is in ``COLIBRI_HTTP_ADMINS``.
The shell decides who the caller is; the services only use it.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from colibri_router.environment import user_id, values_of

# What getpass.getuser() reads, in its order, before it asks the password database.
_LOGIN_VARIABLES = ("LOGNAME", "USER", "LNAME", "USERNAME")
_LOGIN_NAMES = frozenset(_LOGIN_VARIABLES)


@dataclass(frozen=True, slots=True)
class Caller:
    name: str
    admin: bool = False

    @property
    def visible(self) -> str | None:
        """Whose threads and usage this caller reads: their own, or (None) everyone's."""
        return None if self.admin else self.name


# progress, message, total (None: unknown): what a tool's progress notification carries.
Notify = Callable[[float, str, float | None], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """What a tool's service learns of its call besides the arguments: who asked, where its progress
    goes, whether it may read paths on this machine (not for a remote caller over HTTP), and how to
    ask its user a yes/no question (None: the client cannot; :mod:`colibri_router.confirmation`)."""

    caller: Caller
    notify: Notify
    local_files: bool
    # colibri_router.session.Ask, spelled out: that module is not loaded at start-up.
    confirm: Callable[[str], Awaitable[bool]] | None = None


def local_principal() -> str:
    """The principal of a local (stdio) caller: the operating system's user name.

    Read on every call, remembered per input: getpass reads the login variables, then (none set,
    as in a container or a bare service environment) the password database, a file read per call.
    The answer is cached on those variables' values and the user id, so a changed variable is seen
    at once; only an edit of the password entry of the same uid under a running server is not.
    """
    login = values_of(_LOGIN_NAMES)
    return _principal(tuple(login.get(name) for name in _LOGIN_VARIABLES), user_id())


@functools.lru_cache(maxsize=8)
def _principal(_login: tuple[str | None, ...], _user_id: int | None) -> str:
    """getpass's answer for these login variables and this user id (the cache key, unused here)."""
    import getpass  # it imports termios: not at start-up, where every millisecond counts

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in the environment and no passwd entry (containers)
        return "local"


def local_caller() -> Caller:
    """The caller over stdio (and over HTTP without tokens): the operating system's user."""
    return Caller(local_principal())
