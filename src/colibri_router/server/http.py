"""``colibri-router serve --http``: the same tools over the SDK's Streamable HTTP transport, for a team.

Stateless: any replica answers any request, no sticky sessions. What this module adds to the SDK's app:

- **Who is calling.** With ``COLIBRI_HTTP_TOKENS_FILE``, every request needs ``Authorization: Bearer
  <token>``; the SDK's bearer middleware asks :class:`TokensVerifier` and answers 401 itself. No
  OAuth server issues these tokens, so no protected-resource metadata names one. The token's name is
  the caller (see ``identity``).
- **Host/Origin checks.** ``COLIBRI_HTTP_ALLOWED_HOSTS``/``_ORIGINS`` feed the SDK's DNS-rebinding
  protection; on loopback without them only localhost is accepted.
- **Refusals at start-up**, each saying why: a non-loopback address without allowed hosts, or
  without a tokens file (unless ``--insecure-no-auth``); a database this install cannot use.
- **The MCP path's POSTs** (:mod:`.posts`): one JSON body for a call that asked for no progress, an
  SSE stream otherwise; a ``notifications/cancelled`` cancels its call here or at another replica.
  Each process listens for the other replicas' cancellations for its whole life (the app's lifespan).
- ``GET /healthz`` for load balancers, without auth; ``/readyz`` and ``/metrics`` (see
  :mod:`.operations`); the team's pages under ``/ui`` when there is a tokens file
  (:mod:`colibri_router.webui`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from colibri_router import __version__, observability
from colibri_router.engine.keys import share_through
from colibri_router.engine.shared_keys import SharedSetAsides
from colibri_router.errors import ConfigError
from colibri_router.gateway.loader import check_policy_file
from colibri_router.jobs.follow import cancel_published
from colibri_router.logs import configure_logging, get_logger
from colibri_router.observability.metrics import Metrics
from colibri_router.server.inflight import IN_FLIGHT
from colibri_router.server.nodelay import NoDelayHTTPProtocol
from colibri_router.server.operations import add_operator_routes, shared_metrics_directory
from colibri_router.server.posts import McpPosts
from colibri_router.server.tools import build_server
from colibri_router.server.warm import prepare_to_serve
from colibri_router.settings import Settings, comma_list, load_settings
from colibri_router.store import CancelBroadcast, KeySharing, check_database, shared_store
from colibri_router.tokens import TokensFile
from colibri_router.webui import add_team_pages
from colibri_router.webui.sessions import session_secret

# Where a parent hands the options to its uvicorn workers (each builds its own app).
OPTIONS_VARIABLE = "COLIBRI_HTTP_SERVE_OPTIONS"
GRACEFUL_SHUTDOWN_S = 30
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """The command line of ``serve --http``."""

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    workers: int = 1
    insecure_no_auth: bool = False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


@dataclass(frozen=True, slots=True)
class HttpPlan:
    """What the options and the environment decide, checked before anything listens."""

    tokens: TokensFile | None
    security: TransportSecuritySettings


def plan(options: HttpOptions, settings: Settings) -> HttpPlan:
    """Check the options against the environment; a :class:`ConfigError` says why it cannot run."""
    if not options.path.startswith("/"):
        raise ConfigError(f"--path must start with '/', got {options.path!r}")
    check_database(settings)  # else the lifespan's cancel listener would fail once uvicorn started
    check_policy_file(settings)  # a policy file that does not parse would refuse every call
    loopback = is_loopback(options.host)
    hosts, origins = comma_list(settings.http_allowed_hosts), comma_list(settings.http_allowed_origins)
    if not loopback and not hosts:
        raise ConfigError(
            f"refusing to serve on {options.host}, which is not a loopback address, without "
            "COLIBRI_HTTP_ALLOWED_HOSTS: set it to the host names clients use to reach this server "
            "(e.g. router.example.com), so that a web page cannot reach it through DNS rebinding"
        )
    tokens = None
    if settings.http_tokens_file:
        tokens = TokensFile(Path(settings.http_tokens_file).expanduser())
        if not tokens.entries():
            raise ConfigError(
                f"COLIBRI_HTTP_TOKENS_FILE {str(tokens.path)!r} has no token: nobody could call; "
                "add one with `colibri-router token add NAME`"
            )
    elif not loopback and not options.insecure_no_auth:
        raise ConfigError(
            f"refusing to serve on {options.host}, which is not a loopback address, without "
            "COLIBRI_HTTP_TOKENS_FILE: anyone who reaches it could spend your provider keys. Create "
            "tokens with `colibri-router token add NAME`, or pass --insecure-no-auth if something in "
            "front of this server authenticates every request"
        )
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*_with_any_port(hosts), *(_LOOPBACK_HOSTS if loopback else [])],
        allowed_origins=[*origins, *(_LOOPBACK_ORIGINS if loopback else [])],
    )
    return HttpPlan(tokens=tokens, security=security)


def _with_any_port(hosts: list[str]) -> list[str]:
    """A host named without a port is accepted on any port, as it is reached through a proxy on
    443 or directly on --port."""
    expanded: list[str] = []
    for host in hosts:
        expanded.append(host)
        if not host.endswith("]") and ":" not in host.rsplit("]", 1)[-1]:
            expanded.append(f"{host}:*")
    return expanded


class TokensVerifier:
    """The SDK's token-verifier hook over the tokens file: the token's name is the client id."""

    def __init__(self, tokens: TokensFile) -> None:
        self._tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            name = self._tokens.name_of(token)
        except ConfigError as error:  # the file broke while serving: nobody gets in until it is fixed
            get_logger(__name__).error("tokens file unreadable: refusing every request", problem=error.message)
            return None
        return None if name is None else AccessToken(token=token, client_id=name, scopes=[])


@contextlib.asynccontextmanager
async def _listen_for_cancels() -> AsyncIterator[None]:
    """For the process's life: cancellations published by the other replicas reach this one. At its
    end, a worker's in-flight gauge goes (multiprocess metrics)."""
    try:
        store = shared_store(load_settings())
        if isinstance(store, KeySharing):  # the replicas share the pool keys they set aside (docs/keys.md)
            share_through(SharedSetAsides(store))
        if not isinstance(store, CancelBroadcast):
            yield
            return
        async with store.cancel_listener(_cancel_here):
            yield
    finally:
        share_through(None)
        Metrics.process_ended()


def _cancel_here(key: str) -> None:
    """A published cancel: of a call in flight here, or of a job running here (colibri_router.jobs)."""
    if not IN_FLIGHT.cancel(key):
        cancel_published(key)


async def _health(_request: Request) -> Response:
    return JSONResponse({"status": "ok", "version": __version__})


def build_app(options: HttpOptions, decided: HttpPlan) -> Starlette:
    """The ASGI app of ``serve --http``, as :func:`plan` decided it."""
    auth: dict[str, Any] = {}
    if decided.tokens is not None:
        auth = {
            # Static bearer tokens, and no OAuth authorization server behind them: no RFC 9728
            # protected-resource metadata (with no resource_server_url the SDK serves none and its
            # 401 names none), since the metadata's point is to name the servers that issue tokens.
            # issuer_url is required by AuthSettings but read only by an authorization server's routes.
            "auth": AuthSettings(
                issuer_url=options.url,  # type: ignore[arg-type]  # pydantic parses the string
                resource_server_url=None,
                validate_token_resource=False,  # static tokens are issued for this server only
            ),
            "token_verifier": TokensVerifier(decided.tokens),
        }
    observability.install_traces_if_configured()  # each worker process has its own exporter
    server = build_server(**auth)
    server.custom_route("/healthz", methods=["GET"])(_health)
    add_operator_routes(server, tokens=decided.tokens is not None)
    app = server.streamable_http_app(
        streamable_http_path=options.path,
        stateless_http=True,
        json_response=False,
        transport_security=decided.security,
        host=options.host,
    )
    _answer_posts_here(app, options.path)
    if decided.tokens is not None:  # the pages need someone to log in
        add_team_pages(app, decided.tokens, decided.security.allowed_hosts, load_settings().http_session_secret)
    if observability.tracing():
        # The tracing extra (OpenTelemetry), loaded only when tracing is configured.
        from colibri_router.observability.traces import ContinueHttpTrace

        app.user_middleware.insert(0, Middleware(ContinueHttpTrace))
    # The SDK logs each stateless request's transport at info; uvicorn's access line is enough.
    for name in ("mcp.server.streamable_http", "mcp.server.streamable_http_manager"):
        logging.getLogger(name).setLevel(max(logging.getLogger().level, logging.WARNING))
    return app


def _answer_posts_here(app: Starlette, path: str) -> None:
    """Put :class:`McpPosts` where the SDK's endpoint was (behind its bearer check, which stays), with a
    second session manager of the same server for JSON answers, and run both for the app's life."""
    route = next(route for route in app.routes if isinstance(route, Route) and route.path == path)
    holder: Any = route.app if isinstance(route.app, RequireAuthMiddleware) else route
    streamed: StreamableHTTPSessionManager = holder.app.session_manager
    single = StreamableHTTPSessionManager(
        app=streamed.app,
        json_response=True,
        stateless=True,
        security_settings=streamed.security_settings,
        max_request_body_size=streamed.max_request_body_size,
    )
    holder.app = McpPosts(streamed, single)
    sdk_lifespan = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with sdk_lifespan(app), single.run(), _listen_for_cancels():
            yield

    app.router.lifespan_context = lifespan


def app_from_environment() -> Starlette:
    """The app factory each uvicorn worker calls, with the options its parent left in the environment."""
    options = HttpOptions(**json.loads(os.environ[OPTIONS_VARIABLE]))
    settings = load_settings()
    configure_logging(settings.log_level)
    app = build_app(options, plan(options, settings))
    prepare_to_serve(settings)
    return app


def serve_http(options: HttpOptions, decided: HttpPlan) -> None:
    """Run uvicorn until interrupted (``decided`` by :func:`plan`); its logs go through ours (stderr).
    With several workers, each plans again from the same environment and builds its own app."""
    import uvicorn

    common: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "http": NoDelayHTTPProtocol,
        "log_config": None,
        "lifespan": "on",
        # On SIGTERM or Ctrl-C, calls in flight get this long to finish (a replica being drained).
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_S,
    }
    if options.workers == 1:
        app = build_app(options, decided)
        prepare_to_serve(load_settings())
        uvicorn.run(app, **common)
        return
    os.environ[OPTIONS_VARIABLE] = json.dumps(asdict(options))
    session_secret(load_settings().http_session_secret)  # one for all workers: /ui sessions work at each
    with shared_metrics_directory():
        uvicorn.run(f"{__name__}:app_from_environment", factory=True, workers=options.workers, **common)
