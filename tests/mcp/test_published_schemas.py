"""The tools' schemas are published from a precomputed file (start-up builds no model); the file
must be exactly what the models generate, and a call still validates with the model."""

from __future__ import annotations

import json
import subprocess
import sys

from mcp import Client

from colibri_router.server import build_server
from colibri_router.server.generate_schemas import COMMAND, render
from colibri_router.server.schemas import SCHEMAS_FILE


def test_the_published_file_is_what_the_models_generate() -> None:
    assert SCHEMAS_FILE.read_text(encoding="utf-8") == render(), f"a tool model changed: run `{COMMAND}`"


def test_start_up_and_the_tool_list_build_no_model() -> None:
    probe = (
        "import sys, anyio\n"
        "from mcp import Client\n"
        "from colibri_router.server import build_server\n"
        "async def main():\n"
        "    async with Client(build_server()) as client:\n"
        "        await client.list_tools()\n"
        "anyio.run(main)\n"
        "print([m for m in ('colibri_router.schema', 'colibri_router.catalog.schema',\n"
        "    'colibri_router.history.schema', 'colibri_router.testing.tool_input',\n"
        "    'colibri_router.conversation', 'colibri_router.server.arguments') if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "[]"


async def test_the_listed_schemas_are_the_files_with_the_registrys_provider_names() -> None:
    published = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    async with Client(build_server()) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(listed) == set(published)
    for name, tool in listed.items():
        expected = published[name]["input"]
        if name == "router_call":
            assert tool.input_schema["properties"]["provider"]["enum"][:2] == ["kimi", "claude"]
            expected["properties"]["provider"] = tool.input_schema["properties"]["provider"]
        assert tool.input_schema == expected
        assert tool.output_schema == published[name]["output"]


async def test_each_tools_first_call_validates_with_its_model() -> None:
    """Each server builds its tools anew: the first call on each loads the argument model."""
    for tool, arguments, needle in [
        ("router_call", {"prompt": "a", "surprise": 1}, "surprise"),
        ("router_ask_many", {"prompt": "a", "models": ["a", "b"], "thread_id": "new"}, "thread_id"),
        ("router_models", {"live": "sometimes"}, "live"),
        ("router_threads", {"action": "explode"}, "action"),
        ("router_usage", {"since": "yesterday"}, "since"),
        ("router_run", {"scenario": 3}, "scenario"),
    ]:
        async with Client(build_server()) as client:
            result = await client.call_tool(tool, arguments)
        assert result.is_error, tool
        assert needle in result.content[0].text, (tool, result.content[0].text)
