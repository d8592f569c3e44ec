"""The MCP shell: the only package that imports ``mcp``. :mod:`.tools` registers the tools and
shapes their results; :mod:`.identity` says who the request comes from; :mod:`.http` serves them
over Streamable HTTP for a team (tokens, Host/Origin checks, cancellation across replicas)."""

from colibri_router.server.results import error_result, success_result
from colibri_router.server.tools import build_server, tools

__all__ = ["build_server", "error_result", "success_result", "tools"]
