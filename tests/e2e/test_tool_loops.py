"""Multi-round tool loops through the real server, switching providers between turns.

The fake upstream validates every request the way the real services do (K2 IDs and tool messages
for Kimi, Claude-safe IDs, pairing and tool definitions for Claude) and answers 400 otherwise, so
a loop that completes proves each request was acceptable. The tests also check the exact IDs sent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text, anthropic_tool_use, kimi_text, kimi_tool_calls
from harness import router_session
from mcp import ClientSession

pytestmark = pytest.mark.e2e

TOOLS = [
    {"name": "list_dir", "description": "List a directory", "input_schema": {"type": "object"}},
    {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}},
    {"name": "mcp.fs-stat", "description": "Stat a path", "input_schema": {"type": "object"}},
]
NEUTRAL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Host:
    """What an MCP host does in a tool loop: call, run the tools, append, call again."""

    def __init__(self, session: ClientSession, prompt: str) -> None:
        self.session = session
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]

    async def turn(self, **arguments: Any) -> dict[str, Any]:
        result = await self.session.call_tool("router_call", {"messages": self.messages, **arguments})
        assert not result.is_error, result.content[0].text
        structured: dict[str, Any] = result.structured_content or {}
        # `message` is null for an answer without tool calls: then the host appends the text.
        self.messages.append(structured["message"] or {"role": "assistant", "content": structured["content"]})
        if structured["tool_calls"]:
            self.messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": call["id"], "content": f"output of {call['name']}"}
                        for call in structured["tool_calls"]
                    ],
                }
            )
        return structured

    def call_ids(self) -> list[str]:
        return [
            block["id"]
            for message in self.messages
            if isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_use"
        ]


def kimi_wire_ids(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    calls = [c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    return calls, results


def claude_wire_ids(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    blocks = [b for m in body["messages"] for b in m["content"]]
    calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    return calls, results


async def test_four_round_tool_loop_on_kimi(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(
        kimi_tool_calls([("functions.list_dir:0", "list_dir", '{"path": "."}')]),
        # This host resets K2's counter per turn: the second call reuses index 0.
        kimi_tool_calls([("functions.read_file:0", "read_file", '{"path": "a.txt"}')]),
        kimi_tool_calls(
            [
                ("functions.read_file:2", "read_file", '{"path": "b.txt"}'),
                ("functions.mcp.fs-stat:3", "mcp.fs-stat", '{\n  "path": "c"\n}'),
            ],
            text="Reading two more.",
        ),
        kimi_text("All done: 3 files."),
    )
    async with router_session(server_env, server_log) as session:
        host = Host(session, "Summarise the directory")
        rounds = [await host.turn(tools=TOOLS) for _ in range(4)]
    assert [r["stop_reason"] for r in rounds] == ["tool_use", "tool_use", "tool_use", "end_turn"]
    assert rounds[2]["tool_calls"][1]["name"] == "mcp.fs-stat"
    assert rounds[2]["tool_calls"][1]["input"] == {"path": "c"}
    assert rounds[3]["content"] == "All done: 3 files."
    ids = host.call_ids()
    assert len(ids) == len(set(ids)) == 4
    assert all(NEUTRAL_ID.match(i) for i in ids)
    assert fake_upstream.violations == []
    last_calls, last_results = kimi_wire_ids(fake_upstream.kimi.requests[-1].body)
    assert last_calls == [
        "functions.list_dir:0",
        "functions.read_file:1",
        "functions.read_file:2",
        "functions.mcp.fs-stat:3",
    ]
    assert last_results == last_calls
    assert all(r.body["tool_choice"] == "auto" for r in fake_upstream.kimi.requests)


async def test_loop_starts_on_claude_and_continues_on_kimi(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.anthropic.enqueue(
        anthropic_tool_use([("toolu_01XyZ", "list_dir", {"path": "/"})], text="Let me look."),
        anthropic_text("Kimi's findings confirmed."),
    )
    fake_upstream.kimi.enqueue(kimi_tool_calls([("functions.read_file:1", "read_file", '{"path": "/etc"}')]))
    async with router_session(server_env, server_log) as session:
        host = Host(session, "Inspect the root")
        first = await host.turn(tools=TOOLS, provider="claude")
        second = await host.turn(tools=TOOLS, provider="kimi")
        third = await host.turn(tools=TOOLS, model="claude-sonnet-4-5")
    assert first["tool_calls"][0]["id"] == "toolu_01XyZ"  # Claude's ids are already neutral
    assert second["tool_calls"][0]["id"] not in {"toolu_01XyZ"}
    assert third["content"] == "Kimi's findings confirmed."
    assert fake_upstream.violations == []
    kimi_calls, kimi_results = kimi_wire_ids(fake_upstream.kimi.requests[0].body)
    assert kimi_calls == kimi_results == ["functions.list_dir:0"]
    claude_calls, claude_results = claude_wire_ids(fake_upstream.anthropic.requests[-1].body)
    assert claude_calls == claude_results == host.call_ids()


async def test_loop_starts_on_kimi_and_continues_on_claude(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(
        kimi_tool_calls([("functions.list_dir:0", "list_dir", "{}"), ("read_file:1", "read_file", "")]),
        kimi_text("Kimi wraps up."),
    )
    fake_upstream.anthropic.enqueue(anthropic_tool_use([("toolu_02", "mcp.fs-stat", {"path": "x"})]))
    async with router_session(server_env, server_log) as session:
        host = Host(session, "Look around")
        await host.turn(tools=TOOLS)
        on_claude = await host.turn(tools=TOOLS, provider="claude")
        last = await host.turn(tools=TOOLS, provider="kimi")
    assert on_claude["tool_calls"][0]["name"] == "mcp.fs-stat"
    assert last["content"] == "Kimi wraps up."
    assert fake_upstream.violations == []
    claude_calls, claude_results = claude_wire_ids(fake_upstream.anthropic.requests[0].body)
    assert claude_calls == claude_results
    assert all(NEUTRAL_ID.match(i) for i in claude_calls)
    kimi_calls, kimi_results = kimi_wire_ids(fake_upstream.kimi.requests[-1].body)
    assert (
        kimi_calls
        == kimi_results
        == [
            "functions.list_dir:0",
            "functions.read_file:1",
            "functions.mcp.fs-stat:2",
        ]
    )


async def test_thinking_model_gets_its_reasoning_back_and_claude_turns_a_placeholder(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    thinking = "kimi-k2-thinking"
    fake_upstream.kimi.enqueue(
        kimi_tool_calls([("functions.list_dir:0", "list_dir", "{}")], reasoning="I should list first.", model=thinking),
        kimi_text("Done.", reasoning="All read.", model=thinking),
    )
    fake_upstream.anthropic.enqueue(anthropic_tool_use([("toolu_03", "read_file", {"path": "a"})]))
    async with router_session(server_env, server_log) as session:
        host = Host(session, "Go")
        first = await host.turn(tools=TOOLS, model=thinking)
        await host.turn(tools=TOOLS, provider="claude")
        last = await host.turn(tools=TOOLS, model=thinking)
    assert first["thinking"] == "I should list first."
    assert first["message"]["content"][0] == {"type": "thinking", "thinking": "I should list first."}
    assert "I should list first." not in first["content"]
    assert last["thinking"] == "All read."
    assert any("placeholder reasoning_content" in w for w in last["warnings"])
    assert fake_upstream.violations == []
    assistant_turns = [m for m in fake_upstream.kimi.requests[-1].body["messages"] if m["role"] == "assistant"]
    assert assistant_turns[0]["reasoning_content"] == "I should list first."
    assert assistant_turns[1]["reasoning_content"]  # the Claude turn, filled in


async def test_required_tool_choice_on_kimi_becomes_auto_with_a_nudge(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_tool_calls([("functions.read_file:0", "read_file", "{}")]))
    fake_upstream.anthropic.enqueue(anthropic_tool_use([("toolu_04", "read_file", {})]))
    async with router_session(server_env, server_log) as session:
        kimi = await session.call_tool("router_call", {"prompt": "go", "tools": TOOLS, "tool_choice": "required"})
        claude = await session.call_tool(
            "router_call",
            {
                "prompt": "go",
                "tools": TOOLS,
                "tool_choice": {"type": "tool", "name": "read_file"},
                "provider": "claude",
            },
        )
    assert not kimi.is_error and not claude.is_error
    assert any("tool_choice" in w for w in (kimi.structured_content or {})["warnings"])
    kimi_body = fake_upstream.kimi.requests[0].body
    assert kimi_body["tool_choice"] == "auto"
    assert kimi_body["messages"][-1]["role"] == "user"
    assert "call" in kimi_body["messages"][-1]["content"].lower()
    assert fake_upstream.anthropic.requests[0].body["tool_choice"] == {"type": "tool", "name": "read_file"}
    assert fake_upstream.violations == []


async def test_history_with_tool_blocks_but_no_tools_is_still_accepted(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    fake_upstream.kimi.enqueue(kimi_tool_calls([("functions.read_file:0", "read_file", "{}")]))
    fake_upstream.anthropic.enqueue(anthropic_text("Summary without tools."))
    async with router_session(server_env, server_log) as session:
        host = Host(session, "Read it")
        await host.turn(tools=TOOLS)
        final = await host.turn(provider="claude")  # no tools this time
    assert final["content"] == "Summary without tools."
    body = fake_upstream.anthropic.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["read_file"]
    assert body["tool_choice"] == {"type": "none"}
    assert any("no tools" in w for w in final["warnings"])
    assert fake_upstream.violations == []


async def test_tool_calls_as_marker_text_become_real_calls(
    fake_upstream: FakeUpstream, server_env: dict[str, str], server_log: Path
) -> None:
    marker_text = (
        "I'll check.<|tool_calls_section_begin|> <|tool_call_begin|> functions.read_file:0 "
        '<|tool_call_argument_begin|> {"path": "x.md"} <|tool_call_end|>'
        "<|tool_call_begin|>functions.rm-rf:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
        "<|tool_calls_section_end|>"
    )
    fake_upstream.kimi.enqueue(kimi_text(marker_text))
    async with router_session(server_env, server_log) as session:
        result = await session.call_tool("router_call", {"prompt": "go", "tools": TOOLS})
    structured = result.structured_content or {}
    assert structured["stop_reason"] == "tool_use"
    assert [(c["name"], c["input"]) for c in structured["tool_calls"]] == [
        ("read_file", {"path": "x.md"}),
        ("rm-rf", {}),
    ]
    assert "<|" not in structured["content"]
    assert structured["message"]["content"][0] == {"type": "text", "text": "I'll check."}
    assert any("rm-rf" in w and "did not declare" in w for w in structured["warnings"])
