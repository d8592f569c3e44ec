"""The policy file as the server reads it: once per change, never by a restart.

Every request stats the file (as the tokens file is stat'ed); a new modification time or size reads it
again. A file that no longer parses keeps the last good policy in force, and the log says why once per
change of the file; ``/readyz`` does not look at it (the calls keep being served under the last good
policy), ``doctor --http`` reports the error. A file that has never parsed in this process refuses
every call (``CONFIG_ERROR``): with no good policy, nobody's limits would hold.
"""

from __future__ import annotations

import threading
from pathlib import Path

from colibri_router.errors import ConfigError
from colibri_router.gateway.policy import OPEN, Policy, parse_policy
from colibri_router.logs import get_logger
from colibri_router.settings import Settings

_Stamp = tuple[int, int]


class PolicyFile:
    """The policy at ``path``, read again when its modification time or size changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: _Stamp | None = None  # the version of the file last read, good or bad
        self._good: Policy | None = None
        self.problem: str | None = None  # why the file on disk is not the policy in force
        self._lock = threading.Lock()

    def policy(self) -> Policy:
        problem: str | None = None
        try:
            status = self.path.stat()
            stamp: _Stamp | None = (status.st_mtime_ns, status.st_size)
        except OSError as error:
            stamp, problem = None, f"COLIBRI_HTTP_POLICY {str(self.path)!r} cannot be read: {error.strerror}"
        if stamp is None or stamp != self._stamp:
            with self._lock:
                if stamp is None:
                    self._fail(None, problem or "")
                elif stamp != self._stamp:
                    self._read(stamp)
        if self._good is None:
            raise ConfigError(self.problem or f"policy file {self.path} has no valid policy")
        return self._good

    def _read(self, stamp: _Stamp) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
            found = parse_policy(text, str(self.path))
        except OSError as error:
            self._fail(stamp, f"COLIBRI_HTTP_POLICY {str(self.path)!r} cannot be read: {error.strerror}")
        except ConfigError as error:
            self._fail(stamp, error.message)
        else:
            if self._good is not None:
                get_logger(__name__).info("policy file re-read", path=str(self.path), members=len(found.members))
            self._good, self._stamp, self.problem = found, stamp, None

    def _fail(self, stamp: _Stamp | None, problem: str) -> None:
        if problem != self.problem:  # once per change, not once per request
            kept = "keeping the last good policy" if self._good is not None else "refusing every call"
            get_logger(__name__).error(f"policy file invalid: {kept}", problem=problem)
        self._stamp, self.problem = stamp, problem


_FILES: dict[str, PolicyFile] = {}


def policy_file(settings: Settings) -> PolicyFile | None:
    """This process's reader of ``COLIBRI_HTTP_POLICY`` (one per path), None when it is unset."""
    if settings.http_policy is None:
        return None
    path = str(Path(settings.http_policy).expanduser())
    found = _FILES.get(path)
    if found is None:
        found = _FILES[path] = PolicyFile(Path(path))
    return found


def current_policy(settings: Settings) -> Policy:
    """The policy in force: the file's last good one, or no rule at all without a file."""
    file = policy_file(settings)
    return OPEN if file is None else file.policy()


def check_policy_file(settings: Settings) -> Policy | None:
    """Parse the file now, as ``serve --http`` and ``doctor`` do; a :class:`ConfigError` says why not."""
    if settings.http_policy is None:
        return None
    path = Path(settings.http_policy).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"COLIBRI_HTTP_POLICY {str(path)!r} cannot be read: {error.strerror}") from None
    return parse_policy(text, str(path))
