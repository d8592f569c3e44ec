"""``/ui``: the team server's pages, served by ``serve --http`` beside ``/mcp``.

Spend per day by member and by model (7, 30 or 90 days, and yesterday's), recent calls with filters,
one call's detail, and the members of the tokens file with their usage against the budgets. All of it
is read from the ledger the server already writes, through the :class:`~colibri_router.store.Store`.
Administrators also see the providers' keys by fingerprint and their state (:mod:`.keys`).

A member logs in with their token and gets a session cookie (:mod:`.sessions`); administrators
(``COLIBRI_HTTP_ADMINS``) see everyone's calls, others their own. The HTML is made on the server
(:mod:`.markup` escapes every value), the charts are inline SVG (:mod:`.charts`), the stylesheet is
in this package: no script, no build step, nothing fetched from elsewhere, so the pages work offline.
Without a tokens file there is nobody to log in, and no pages.
"""

from __future__ import annotations

from starlette.applications import Starlette

from colibri_router.tokens import TokensFile
from colibri_router.webui.routes import TeamPages
from colibri_router.webui.sessions import Sessions, session_secret


def add_team_pages(app: Starlette, tokens: TokensFile, allowed_hosts: list[str], secret: str | None) -> None:
    """Serve the pages under ``/ui`` of ``app``, for the members of ``tokens``; ``allowed_hosts`` as
    the MCP endpoint's Host check takes them; ``secret``: ``COLIBRI_HTTP_SESSION_SECRET``."""
    pages = TeamPages(tokens, Sessions(tokens, session_secret(secret)), allowed_hosts)
    app.router.routes.extend(pages.routes())
