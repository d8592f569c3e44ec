"""serve --http loads at start what a first call would, then freezes its heap (see server/warm.py).
Each check runs in a fresh interpreter: freezing is for the life of a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fake_upstream import FakeUpstream

ROOT = Path(__file__).resolve().parents[2]

CALL_AFTER_WARMING = """
import gc, json, sys, anyio
from mcp import Client
from colibri_router.server import build_server
from colibri_router.server.warm import prepare_to_serve
from colibri_router.settings import load_settings

prepare_to_serve(load_settings())
frozen, threshold = gc.get_freeze_count(), gc.get_threshold()[0]
before = set(sys.modules)

async def main():
    async with Client(build_server()) as client:
        calls = [
            ("router_call", {"prompt": "hi", "provider": "kimi"}),
            ("router_call", {"prompt": "hi", "surprise": 1}),
            ("router_usage", {}),
            ("router_threads", {"action": "list"}),
        ]
        return [(await client.call_tool(tool, arguments)).is_error for tool, arguments in calls]

errors = anyio.run(main)
loaded = sorted(m for m in set(sys.modules) - before if m.startswith("colibri_router"))
print(json.dumps({"errors": errors, "frozen": frozen, "threshold": threshold, "loaded_by_calls": loaded}))
"""


def test_after_warming_the_first_calls_import_nothing_of_ours_and_the_heap_is_frozen(tmp_path: Path) -> None:
    with FakeUpstream() as fake:
        env = {
            **os.environ,
            "COLIBRI_KIMI_API_KEY": "sk-kimi-test-0123456789",
            "COLIBRI_KIMI_BASE_URL": fake.kimi_base_url,
            "COLIBRI_STATE_DIR": str(tmp_path),
        }
        result = subprocess.run(
            [sys.executable, "-c", CALL_AFTER_WARMING],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)

    assert report["errors"] == [False, True, False, False]  # the bad arguments were refused

    assert report["loaded_by_calls"] == []
    assert report["frozen"] > 10_000  # the registry, the validators, the price data
    assert report["threshold"] == 10_000
