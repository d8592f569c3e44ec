"""The errors a job answers (docs/errors.md): their kinds are in :data:`colibri_router.errors.Kind`."""

from __future__ import annotations

from colibri_router.errors import ColibriError, Kind


class JobNotFoundError(ColibriError):
    """``router_job`` names no job of the caller's: unknown, expired, or another member's (one answer)."""

    code = "JOB_NOT_FOUND"
    kind: Kind = "INVALID_REQUEST"


class ServerStoppedError(ColibriError):
    """A job's server stopped (Ctrl-C, SIGTERM, a crash) before the job ended; the call can be made again."""

    code = "SERVER_STOPPED"
    kind: Kind = "SERVER_STOPPED"


class JobCancelledError(ColibriError):
    """``router_job`` with ``cancel`` (or ``colibri-router jobs ID --cancel``) ended the job."""

    code = "JOB_CANCELLED"
    kind: Kind = "CANCELLED"
