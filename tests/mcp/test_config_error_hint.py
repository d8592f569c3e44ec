"""A CONFIG_ERROR result points to ``colibri-router doctor``, in its text and its structured error
alike; other errors do not carry the hint (issue 21 §4)."""

from __future__ import annotations

import json

from mcp import Client

from colibri_router.server import build_server

HINT = "(check every setting: `colibri-router doctor`)"


async def test_a_config_error_points_to_doctor_and_other_errors_do_not() -> None:
    async with Client(build_server()) as client:
        missing_key = await client.call_tool("router_call", {"prompt": "hi", "provider": "claude"})
        invalid = await client.call_tool("router_call", {"prompt": "hi", "max_tokens": 0})

    first, second = missing_key.content[0].text.split("\n")
    assert first.startswith("ANTHROPIC_CONFIG_ERROR: no API key for claude")
    assert first.endswith(HINT)
    assert json.loads(second)["error"]["message"] == first.removeprefix("ANTHROPIC_CONFIG_ERROR: ")
    assert (missing_key.structured_content or {})["error"]["kind"] == "CONFIG_ERROR"
    assert HINT not in invalid.content[0].text
