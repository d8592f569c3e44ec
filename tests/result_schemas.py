"""Every tool result a test receives through the official MCP client is checked against that tool's
output schema from tools/list, errors included (issue 31 §1).

The Python client checks only successful results; the official TypeScript client (Gemini CLI's) checks
every result that carries ``structuredContent``, and refuses the whole result when it does not conform.
:func:`install` wraps ``ClientSession.call_tool`` (which ``mcp.Client`` goes through too) for the whole
test run, so every in-memory, stdio and HTTP test checks what it gets. The schemas come from the
session's own tools/list: the listings a test or the SDK makes are recorded, and a session whose first
result comes before any listing lists the tools once, as the SDK does before checking a success.
"""

from __future__ import annotations

import functools
import json
import weakref
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from mcp import ClientSession
from mcp.types import CallToolResult, ListToolsResult

# Each session's output schemas by tool name, from its latest tools/list.
_LISTED: weakref.WeakKeyDictionary[ClientSession, dict[str, dict[str, Any] | None]] = weakref.WeakKeyDictionary()
# Results checked since install(), per tool and whether an error: what a test can assert was covered.
CHECKED: dict[tuple[str, bool], int] = {}


class NonConformingResult(AssertionError):
    """A tool result whose ``structuredContent`` its tool's output schema rejects."""


def check(tool: str, schema: dict[str, Any] | None, result: CallToolResult) -> None:
    """Raise :class:`NonConformingResult` unless ``result``'s structured content conforms to ``schema``
    (a result without structured content, or a tool without an output schema, has nothing to check)."""
    if schema is None or result.structured_content is None:
        return
    problems = sorted(Draft202012Validator(schema).iter_errors(result.structured_content), key=str)
    if problems:
        shown = json.dumps(result.structured_content)[:500]
        raise NonConformingResult(
            f"{tool} returned {'an error' if result.is_error else 'a result'} its output schema rejects "
            f"({problems[0].message}): {shown}"
        )
    key = (tool, result.is_error)
    CHECKED[key] = CHECKED.get(key, 0) + 1


def install() -> Callable[[], None]:
    """Check every result from now on; returns the function that stops checking."""
    original_call = ClientSession.call_tool
    original_list = ClientSession.list_tools

    @functools.wraps(original_list)
    async def list_tools(self: ClientSession, *args: Any, **kwargs: Any) -> ListToolsResult:
        listed = await original_list(self, *args, **kwargs)
        known = _LISTED.setdefault(self, {})
        known.update({tool.name: tool.output_schema for tool in listed.tools})
        return listed

    @functools.wraps(original_call)
    async def call_tool(self: ClientSession, name: str, *args: Any, **kwargs: Any) -> Any:
        result = await original_call(self, name, *args, **kwargs)
        if isinstance(result, CallToolResult) and result.structured_content is not None:
            if name not in _LISTED.get(self, {}):
                await self.list_tools()
            check(name, _LISTED.get(self, {}).get(name), result)
        return result

    ClientSession.list_tools = list_tools  # type: ignore[method-assign]
    ClientSession.call_tool = call_tool  # type: ignore[method-assign, assignment]

    def uninstall() -> None:
        ClientSession.list_tools = original_list  # type: ignore[method-assign]
        ClientSession.call_tool = original_call  # type: ignore[method-assign]

    return uninstall
