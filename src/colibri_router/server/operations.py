"""The operator's endpoints of ``serve --http``, beside ``/healthz``:

- ``GET /readyz``, without auth: 200 while calls can work (the store answers), 503 while they cannot
  (see :mod:`colibri_router.server.readiness`), so a load balancer takes the replica out and back in.
- ``GET /metrics``: Prometheus text (:mod:`colibri_router.observability.metrics`), behind the token
  check unless ``COLIBRI_METRICS_PUBLIC=1``; with several workers every answer sums them all
  (:func:`shared_metrics_directory`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from colibri_router import observability
from colibri_router.errors import ConfigError
from colibri_router.observability.metrics import CONTENT_TYPE, MULTIPROCESS_VARIABLE, Metrics
from colibri_router.server.readiness import Readiness
from colibri_router.settings import load_settings


def add_operator_routes(server: MCPServer[Any], *, tokens: bool) -> None:
    """``/readyz`` and ``/metrics`` on ``server``; ``tokens``: whether callers need a token."""
    server.custom_route("/readyz", methods=["GET"])(_ready_endpoint(Readiness()))
    server.custom_route("/metrics", methods=["GET"])(_metrics_endpoint(process_metrics(), tokens))


def _ready_endpoint(readiness: Readiness) -> Any:
    async def ready(_request: Request) -> Response:
        problem = await readiness.problem()
        if problem is None:
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "unavailable", "problem": problem}, status_code=503)

    return ready


_process_metrics: Metrics | None = None


def process_metrics() -> Metrics:
    """This process's metrics, made (and installed as a sink) by the first app built in it."""
    global _process_metrics  # noqa: PLW0603 - one set of metrics per process
    if _process_metrics is None:
        _process_metrics = Metrics()
    observability.install(_process_metrics)  # again after an uninstall (tests); a no-op otherwise
    return _process_metrics


def _metrics_endpoint(metrics: Metrics, tokens: bool) -> Any:
    async def exposition(request: Request) -> Response:
        # Custom routes are outside the SDK's RequireAuth; its authentication middleware has still
        # read the bearer token, so a valid one shows as an authenticated user here.
        public = not tokens or _metrics_public()
        if not public and not (request.scope.get("user") is not None and request.user.is_authenticated):
            return JSONResponse(
                {"error": "invalid_token", "error_description": "a bearer token is required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)

    return exposition


def _metrics_public() -> bool:
    try:
        return load_settings().metrics_public == "1"
    except ConfigError:  # unusable settings: every call fails until fixed; metrics keep their token
        return False


@contextlib.contextmanager
def shared_metrics_directory() -> Iterator[None]:
    """Workers write their metrics to one directory, and each /metrics sums them (prometheus-client's
    multiprocess mode): a fresh directory for this run, removed at its end, unless the operator
    named one in PROMETHEUS_MULTIPROC_DIR. Workers are spawned, so they see it from their start."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="colibri-router-metrics-") as directory:
        os.environ[MULTIPROCESS_VARIABLE] = directory
        try:
            yield
        finally:
            del os.environ[MULTIPROCESS_VARIABLE]
