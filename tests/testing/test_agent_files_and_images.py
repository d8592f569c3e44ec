"""Scenarios with `files` on a turn and simulated tools that return images (`then: {image: path}`):
read once before the runs, sent as router_call would send them, refused at load when unreadable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_fakes import ScriptedCaller, calls, scenario, text
from media_samples import b64, png

from colibri_router.testing import run_scenario
from colibri_router.testing.scenario import InvalidInput

SHOT = png(3, 2)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("print('hi')\n", encoding="utf-8")
    (tmp_path / "shot.png").write_bytes(SHOT)
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    return tmp_path


def screenshot_scenario(**overrides: Any) -> dict[str, Any]:
    tool = {
        "name": "screenshot",
        "input_schema": {"type": "object"},
        "defaultResponse": {"then": {"image": "shot.png"}},
    }
    document = scenario(prompt=None, turns=[{"user": "Review the app", "files": ["src/*.py"]}], tools=[tool], expect=[])
    document.update(overrides)
    return document


async def test_turn_files_and_a_tool_image_reach_the_model(workspace: Path) -> None:
    caller = ScriptedCaller({"fake": [calls(("screenshot", {})), text("Done.")]})
    await run_scenario(screenshot_scenario(), caller=caller)
    first, second = caller.calls
    turn = first.messages[0]["content"]
    assert turn[0] == {"type": "text", "text": "Review the app"}
    assert "<file path=\"src/app.py\">\n   1│ print('hi')\n</file>" in turn[1]["text"]
    result = second.messages[-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(SHOT)}}
    ]


async def test_a_tool_image_that_is_not_an_image_is_refused_before_any_run(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("words\n", encoding="utf-8")
    document = screenshot_scenario()
    document["tools"][0]["defaultResponse"] = {"then": {"image": "notes.txt"}}
    caller = ScriptedCaller({"fake": [text("never")]})
    with pytest.raises(InvalidInput, match="is not a PNG, JPEG, GIF or WebP image"):
        await run_scenario(document, caller=caller)
    assert caller.calls == []


async def test_missing_turn_files_are_refused_before_any_run(workspace: Path) -> None:
    document = screenshot_scenario(turns=[{"user": "Review", "files": ["missing.py"]}])
    caller = ScriptedCaller({"fake": [text("never")]})
    with pytest.raises(InvalidInput, match=r"'missing\.py' is not a file"):
        await run_scenario(document, caller=caller)
    assert caller.calls == []


async def test_a_remote_caller_reads_nothing_outside_the_files_root(workspace: Path) -> None:
    caller = ScriptedCaller({"fake": [text("never")]})
    with pytest.raises(InvalidInput, match="COLIBRI_HTTP_FILES_ROOT"):
        await run_scenario(screenshot_scenario(), caller=caller, remote=True)
