"""Who is looking at ``/ui``: a member logs in with their token once and then carries a signed
session cookie, never the token itself.

The cookie is ``<name>.<expires>.<nonce>.<mac>``: an HMAC-SHA256, under the server's session secret,
of the name, the expiry, a random nonce and the SHA-256 the tokens file holds for that name. So a
session ends by itself after :data:`SESSION_S`, and at once when its member's line leaves the tokens
file or gets a new token; nothing is stored on the server, and any worker or replica that shares the
secret (``COLIBRI_HTTP_SESSION_SECRET``; unset, one random secret per server, shared by its workers)
accepts it. The cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's page sends
it) and limited to ``/ui``; Secure when the page was reached over HTTPS.

Forms that change something (logging in, logging out) carry a CSRF token: for logout an HMAC of the
session cookie; for the login form an HMAC of a random pre-login cookie (double submit). And a POST
whose ``Origin`` names another host, or that the browser marks as cross-site (``Sec-Fetch-Site``), is
refused before anything else is read.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from colibri_router.tokens import NAME_PATTERN, TokensFile

SESSION_COOKIE = "colibri_ui_session"
LOGIN_COOKIE = "colibri_ui_login"
COOKIE_PATH = "/ui"
SESSION_S = 12 * 3600
LOGIN_FORM_S = 3600
SECRET_VARIABLE = "COLIBRI_HTTP_SESSION_SECRET"


def session_secret(configured: str | None) -> bytes:
    """``COLIBRI_HTTP_SESSION_SECRET`` (``configured``), or one random secret made now for this
    process and left in its environment, where the uvicorn workers it starts afterwards find it, so
    that they all accept each other's sessions."""
    secret = configured or os.environ.get(SECRET_VARIABLE)
    if not secret:
        secret = os.environ[SECRET_VARIABLE] = secrets.token_urlsafe(32)
    return secret.encode()


@dataclass(frozen=True, slots=True)
class Session:
    """A logged-in member: their token's name, and the cookie value (for its CSRF token)."""

    name: str
    cookie: str


class Sessions:
    """Makes and checks session cookies and CSRF tokens under one secret, against ``tokens``."""

    def __init__(self, tokens: TokensFile, secret: bytes) -> None:
        self._tokens = tokens
        self._secret = secret

    def log_in(self, token: str) -> str | None:
        """A new session cookie's value for the member whose token this is; None for a wrong token."""
        name = self._tokens.name_of(token)
        if name is None:
            return None
        expires = int(time.time()) + SESSION_S
        payload = f"{name}.{expires}.{secrets.token_urlsafe(12)}"
        mac = self._mac(payload, name)
        return None if mac is None else f"{payload}.{mac}"

    def current(self, request: Request) -> Session | None:
        """The session the request's cookie proves, if it is intact, unexpired and its member's token
        is still the one it was made with."""
        cookie = request.cookies.get(SESSION_COOKIE, "")
        pieces = cookie.rsplit(".", 3)
        if len(pieces) != 4:
            return None
        name, expires, _nonce, mac = pieces
        if not NAME_PATTERN.fullmatch(name) or not expires.isdigit() or int(expires) < time.time():
            return None
        expected = self._mac(cookie.rsplit(".", 1)[0], name)
        if expected is None or not hmac.compare_digest(mac, expected):
            return None
        return Session(name, cookie)

    def csrf_token(self, bound_to: str) -> str:
        """The CSRF token of a form shown with this cookie value (session or pre-login)."""
        return hmac.new(self._secret, b"csrf\0" + bound_to.encode(), hashlib.sha256).hexdigest()

    def csrf_valid(self, bound_to: str, submitted: str) -> bool:
        return bool(bound_to) and hmac.compare_digest(self.csrf_token(bound_to), submitted)

    def _mac(self, payload: str, name: str) -> str | None:
        """None when ``name`` has no token (any more). The member's current hash is part of the
        message: a removed or replaced token ends the session."""
        digest = next((entry.sha256 for entry in self._tokens.entries() if entry.name == name), None)
        if digest is None:
            return None
        message = f"session\0{payload}\0{digest}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()


def set_cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def forget_cookie(response: Response, request: Request, name: str) -> None:
    response.delete_cookie(
        name, path=COOKIE_PATH, httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )


def cross_site(request: Request) -> bool:
    """Whether a POST comes from another site's page: its ``Origin`` names another host than the one
    it was sent to, or the browser says so in ``Sec-Fetch-Site``. A client that sends neither (not a
    browser) is judged by its CSRF token alone."""
    origin = request.headers.get("origin")
    if origin is not None:
        host = origin.split("://", 1)[-1]
        if origin == "null" or host != request.headers.get("host"):
            return True
    return request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none")
