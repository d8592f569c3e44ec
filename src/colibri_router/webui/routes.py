"""The ``/ui`` routes of ``serve --http``: login and logout, and the pages, each answering only a
valid session (else the login page). An administrator (``COLIBRI_HTTP_ADMINS``, read on every
request) sees every member's calls and jobs; a member sees the same pages with only their own."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from importlib import resources
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colibri_router.errors import ConfigError
from colibri_router.jobs.follow import settled
from colibri_router.logs import get_logger
from colibri_router.settings import comma_list, load_settings
from colibri_router.store import BudgetLimits, CallQuery, Store, shared_store
from colibri_router.store.utc_windows import utc_now
from colibri_router.tokens import TokensFile
from colibri_router.webui import pages
from colibri_router.webui.jobs import jobs_page
from colibri_router.webui.keys import keys_page, provider_keys
from colibri_router.webui.layout import Viewer
from colibri_router.webui.markup import Html
from colibri_router.webui.queries import WINDOWS_DAYS, members_usage, spend_series, yesterday
from colibri_router.webui.sessions import (
    LOGIN_COOKIE,
    LOGIN_FORM_S,
    SESSION_COOKIE,
    SESSION_S,
    Session,
    Sessions,
    cross_site,
    forget_cookie,
    set_cookie,
)

_PAGE_SIZE = 50
_LOOKBACK_DAYS = 90  # how far back the calls page's member and model choices look
# No script at all, styles only from /ui/static, never inside a frame (clickjacking).
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self';"
    " frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_STYLESHEET = resources.files("colibri_router.webui").joinpath("ui.css").read_text(encoding="utf-8")

Handler = Callable[[Request, Viewer, Store], Awaitable[Response]]


def _answer(document: Html, status: int = 200) -> HTMLResponse:
    return HTMLResponse(document, status_code=status, headers=_HEADERS)


class TeamPages:
    """The routes over the tokens file (who may log in) and the process's store (the ledger)."""

    def __init__(self, tokens: TokensFile, sessions: Sessions, allowed_hosts: list[str]) -> None:
        self._tokens = tokens
        self._sessions = sessions
        self._allowed_hosts = allowed_hosts

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/ui", lambda _request: RedirectResponse("/ui/spend", 303), methods=["GET"]),
            Route("/ui/static/ui.css", _stylesheet, methods=["GET"]),
            Route("/ui/login", self.login_form, methods=["GET"]),
            Route("/ui/login", self.log_in, methods=["POST"]),
            Route("/ui/logout", self.log_out, methods=["POST"]),
            Route("/ui/spend", self._page(self.spend), methods=["GET"]),
            Route("/ui/calls", self._page(self.calls), methods=["GET"]),
            Route("/ui/calls/{call_id:int}", self._page(self.call), methods=["GET"]),
            Route("/ui/jobs", self._page(self.jobs), methods=["GET"]),
            Route("/ui/members", self._page(self.members), methods=["GET"]),
            Route("/ui/keys", self._page(self.keys), methods=["GET"]),
        ]

    # Logging in and out

    async def login_form(self, request: Request, problem: str | None = None, status: int = 200) -> Response:
        if (refused := self._refuse_host(request)) is not None:
            return refused
        nonce = secrets.token_urlsafe(16)
        response = _answer(pages.login_page(self._sessions.csrf_token(nonce), problem), status)
        set_cookie(response, request, LOGIN_COOKIE, nonce, LOGIN_FORM_S)
        return response

    async def log_in(self, request: Request) -> Response:
        if (refused := self._refuse_post(request)) is not None:
            return refused
        form = await request.form()
        csrf, token = str(form.get("csrf", "")), str(form.get("token", ""))
        if not self._sessions.csrf_valid(request.cookies.get(LOGIN_COOKIE, ""), csrf):
            return await self.login_form(request, "The form had expired: log in again.", 403)
        try:
            cookie = self._sessions.log_in(token.strip())
        except ConfigError as error:
            get_logger(__name__).error("tokens file unreadable: nobody can log in to /ui", problem=error.message)
            cookie = None
        if cookie is None:
            return await self.login_form(request, "That token is not valid here.", 401)
        response = RedirectResponse("/ui/spend", 303, headers=_HEADERS)
        set_cookie(response, request, SESSION_COOKIE, cookie, SESSION_S)
        forget_cookie(response, request, LOGIN_COOKIE)
        return response

    async def log_out(self, request: Request) -> Response:
        if (refused := self._refuse_post(request)) is not None:
            return refused
        session = self._session(request)
        form = await request.form()
        if session is not None and not self._sessions.csrf_valid(session.cookie, str(form.get("csrf", ""))):
            return _answer(pages.message_page("Refused", "That form had no valid CSRF token."), 403)
        response = RedirectResponse("/ui/login", 303, headers=_HEADERS)
        forget_cookie(response, request, SESSION_COOKIE)
        return response

    # The pages

    async def spend(self, request: Request, viewer: Viewer, store: Store) -> Response:
        days = _int_choice(request.query_params.get("days"), WINDOWS_DAYS, WINDOWS_DAYS[0])
        now = utc_now()
        by_member = await spend_series(store, viewer.visible, now, days, "principal")
        by_model = await spend_series(store, viewer.visible, now, days, "model")
        return _answer(pages.spend_page(viewer, days, by_member, by_model, yesterday(now)))

    async def calls(self, request: Request, viewer: Viewer, store: Store) -> Response:
        params = request.query_params
        filters = pages.CallFilters(**{f.name: params.get(f.name, "").strip() for f in fields(pages.CallFilters)})
        try:
            since = _day(filters.since)
            until = _day(filters.until)
            before = int(params["before"]) if params.get("before") else None
        except ValueError:
            return _answer(pages.message_page("Calls", "A date is YYYY-MM-DD, and before= a call id.", viewer), 400)
        if filters.outcome and filters.outcome not in pages.OUTCOME_CHOICES:
            return _answer(pages.message_page("Calls", f"No such outcome: {filters.outcome}.", viewer), 400)
        query = CallQuery(
            principal=viewer.visible or filters.member or None,
            model=filters.model or None,
            outcome=filters.outcome or None,
            since=since,
            until=None if until is None else until + timedelta(days=1),
            before_id=before,
            limit=_PAGE_SIZE,
        )
        found = await store.list_calls(query)
        recent = utc_now() - timedelta(days=_LOOKBACK_DAYS)
        models = sorted({spend.key for spend in await store.spend_by_day(viewer.visible, recent, "model")})
        members = sorted(
            {entry.name for entry in self._tokens.entries()}
            | {spend.key for spend in await store.spend_by_day(viewer.visible, recent, "principal")}
        )
        older = None
        if len(found) == _PAGE_SIZE:
            kept = {name: value for name, value in params.items() if name != "before" and value}
            older = "/ui/calls?" + urlencode({**kept, "before": str(found[-1].call_id)})
        return _answer(pages.calls_page(viewer, filters, members, models, found, older))

    async def call(self, request: Request, viewer: Viewer, store: Store) -> Response:
        found = await store.get_call(request.path_params["call_id"], viewer.visible)
        if found is None:  # unknown and another member's answer alike
            return _answer(pages.message_page("No such call", "There is no call with that id.", viewer), 404)
        return _answer(pages.call_page(viewer, found))

    async def jobs(self, request: Request, viewer: Viewer, store: Store) -> Response:
        settings = load_settings()
        member = request.query_params.get("member", "").strip()
        # A member's own jobs whatever they ask for, as on the calls page.
        found = await store.list_team_jobs(viewer.visible or member or None, _PAGE_SIZE, settings.job_ttl_s)
        # A job whose process is gone reads as router_job answers it: ended as SERVER_STOPPED.
        listed = [await settled(store, record, settings) for record in found]
        members = sorted({entry.name for entry in self._tokens.entries()} | {job.principal for job in listed})
        return _answer(jobs_page(viewer, member, members, listed, _PAGE_SIZE))

    async def members(self, request: Request, viewer: Viewer, store: Store) -> Response:
        settings = load_settings()
        usage = await members_usage(store, viewer.visible, utc_now())
        names = [entry.name for entry in self._tokens.entries()]
        names += sorted(name for name in usage if name not in names)  # calls of a token since removed
        if not viewer.admin:
            names = [viewer.name]
        limits = BudgetLimits.from_usd(
            daily=settings.budget_daily_usd,
            monthly=settings.budget_monthly_usd,
            daily_per_principal=settings.budget_daily_usd_per_user,
        )
        admins = comma_list(settings.http_admins)
        return _answer(pages.members_page(viewer, names, admins, usage, limits))

    async def keys(self, request: Request, viewer: Viewer, store: Store) -> Response:
        if not viewer.admin:  # as another member's call: the same answer as an address that is not there
            return _answer(pages.message_page("No such page", "There is no page here.", viewer), 404)
        return _answer(keys_page(viewer, await provider_keys()))

    # Checks every request passes

    def _page(self, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if (refused := self._refuse_host(request)) is not None:
                return refused
            session = self._session(request)
            if session is None:
                return RedirectResponse("/ui/login", 303, headers=_HEADERS)
            settings = load_settings()
            viewer = Viewer(
                session.name,
                session.name in comma_list(settings.http_admins),
                self._sessions.csrf_token(session.cookie),
            )
            store = shared_store(settings)
            if store is None:
                return _answer(
                    pages.message_page("No ledger", "COLIBRI_STORE is off: there is no ledger to show.", viewer), 503
                )
            return await handler(request, viewer, store)

        return endpoint

    def _session(self, request: Request) -> Session | None:
        try:
            return self._sessions.current(request)
        except ConfigError as error:
            get_logger(__name__).error("tokens file unreadable: every /ui session refused", problem=error.message)
            return None

    def _refuse_host(self, request: Request) -> Response | None:
        """The Host check of the MCP endpoint (DNS rebinding), for the pages too."""
        if _host_allowed(request.headers.get("host", ""), self._allowed_hosts):
            return None
        return Response("Invalid Host header", status_code=421)

    def _refuse_post(self, request: Request) -> Response | None:
        if (refused := self._refuse_host(request)) is not None:
            return refused
        if cross_site(request):
            return _answer(pages.message_page("Refused", "A form from another site cannot act here."), 403)
        return None


async def _stylesheet(_request: Request) -> Response:
    return Response(_STYLESHEET, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


def _host_allowed(host: str, patterns: list[str]) -> bool:
    """``host`` matches a pattern exactly, or its host part matches one ending in ``:*`` (any port)."""
    return any(host == pattern or (pattern.endswith(":*") and host.startswith(pattern[:-1])) for pattern in patterns)


def _int_choice(raw: str | None, choices: tuple[int, ...], default: int) -> int:
    return int(raw) if raw is not None and raw.isdigit() and int(raw) in choices else default


def _day(text: str) -> datetime | None:
    return None if not text else datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
