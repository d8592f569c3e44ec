"""Who the current request comes from: the bearer token's name over HTTP (the SDK's auth middleware
verified it and keeps it in a context variable), else the local user."""

from __future__ import annotations

from mcp.server.auth.middleware.auth_context import get_access_token

from colibri_router.callers import Caller, local_principal
from colibri_router.settings import comma_list, load_settings


def caller_name() -> str:
    token = get_access_token()
    return token.client_id if token is not None else local_principal()


def caller(name: str) -> Caller:
    """The caller named ``name``; an administrator when ``COLIBRI_HTTP_ADMINS`` names them (read now)."""
    if get_access_token() is None:
        return Caller(name)  # the local user: their own records, as over stdio
    return Caller(name, admin=name in comma_list(load_settings().http_admins))
