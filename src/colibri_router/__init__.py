"""colibri-router: one MCP tool, ``router_call``, in front of Kimi K2 and Claude."""

__version__ = "0.1.0"
