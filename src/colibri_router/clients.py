"""HTTP clients for upstream calls: how they are configured, and which one a call uses.

The server opens one client for its lifetime; library calls that pass none get one from here too.
"""

from __future__ import annotations

import httpx

# The call's deadline bounds everything; this only stops a connect from hanging on an unreachable host.
HTTP_TIMEOUT = httpx.Timeout(None, connect=10.0)
# Few idle connections are kept: httpcore scans every pooled connection whenever a request starts or
# ends, which made 100 concurrent calls CPU-bound with 64 kept (see benchmarks/).
POOL_LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=16)


def open_http_client() -> httpx.AsyncClient:
    """A client configured for upstream calls: the server's shared one, or a call's short-lived one."""
    return httpx.AsyncClient(timeout=HTTP_TIMEOUT, limits=POOL_LIMITS)
