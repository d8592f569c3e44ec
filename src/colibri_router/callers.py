"""Who is calling: the principal a call is recorded for, and whether they may read everyone's records.

Over stdio the caller is the local user. Over HTTP it is the name of the bearer token the request
carried (``COLIBRI_HTTP_TOKENS_FILE``), an administrator when that name is in ``COLIBRI_HTTP_ADMINS``.
The shell decides who the caller is; the services only use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Caller:
    name: str
    admin: bool = False

    @property
    def visible(self) -> str | None:
        """Whose threads and usage this caller reads: their own, or (None) everyone's."""
        return None if self.admin else self.name


def local_principal() -> str:
    """The principal of a local (stdio) caller: the operating system's user name."""
    import getpass  # it imports termios: not at start-up, where every millisecond counts

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in the environment and no passwd entry (containers)
        return "local"


def local_caller() -> Caller:
    """The caller over stdio (and over HTTP without tokens): the operating system's user."""
    return Caller(local_principal())
