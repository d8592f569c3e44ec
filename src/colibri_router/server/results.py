"""A tool's answer as the MCP result every host reads: ``structuredContent``, and the same object as
compact JSON in the text block (hosts hand their model one or the other); a failure is ``isError``
with the error object, its text ``CODE: message`` then that object. Both shapes are the tool's
published output schema (:mod:`.generate_schemas`)."""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from colibri_router.errors import ColibriError


def success_result(result: BaseModel | dict[str, Any], *, sparse: bool = False) -> CallToolResult:
    """The result object as ``structuredContent``, and the same object as compact JSON in the text
    block: hosts hand their model one or the other (Claude Code the structured one, Gemini CLI the
    text), and each then reads all of it, once. ``sparse`` (the tool table says which tools): the
    fields a result lacks are left out instead of answered null."""
    structured = result if isinstance(result, dict) else result.model_dump(mode="json", exclude_none=sparse)
    text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def error_result(error: ColibriError) -> CallToolResult:
    """Built by hand: the SDK's ToolError would prefix "Error executing tool" before our code."""
    # The error objects (and with them the result models) load only when a call fails.
    from colibri_router.outcomes import error_structured, error_text

    structured = error_structured(error)
    return CallToolResult(
        content=[TextContent(type="text", text=error_text(error, structured))],
        structured_content=structured,
        is_error=True,
    )
