"""Scenarios run through the real router (the default caller) against the strict loopback fake: every
provider rule applies, and the router's repairs are scored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text, anthropic_tool_use, kimi_text, kimi_tool_calls

from colibri_router.testing import run_scenario

LOOKUP = {
    "name": "lookup_order",
    "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    "responses": [{"when": {"order_id": "12345"}, "then": "two charges of 40: c1 and c2"}],
}
MARKERS = (
    "Let me look.<|tool_calls_section_begin|><|tool_call_begin|>functions.lookup_order:0"
    '<|tool_call_argument_begin|>{"order_id": "12345"}<|tool_call_end|><|tool_calls_section_end|>'
)


@pytest.fixture(autouse=True)
def upstream_env(monkeypatch: pytest.MonkeyPatch, fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-0123456789")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_upstream.anthropic_base_url)
    monkeypatch.setenv("COLIBRI_STATE_DIR", str(tmp_path / "state"))


def scenario(**fields: Any) -> dict[str, Any]:
    return {
        "colibri": 1,
        "name": "refund",
        "models": ["kimi:kimi-k2-0905-preview"],
        "turns": [{"label": "ask", "user": "I was charged twice for order 12345."}],
        "tools": [LOOKUP],
        "expect": [
            {"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345"}},
            {"type": "clean_protocol"},
        ],
        **fields,
    }


async def test_marker_text_calls_pass_tool_called_but_fail_clean_protocol(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(kimi_text(MARKERS), kimi_text("Found both charges."))
    report = await run_scenario(scenario())
    [model] = report.models
    [run] = model.results
    verdicts = {a.type: a.passed for a in run.assertions}
    assert verdicts == {"tool_called": True, "clean_protocol": False}
    assert model.verdict == "fail"
    assert fake_upstream.violations == []
    # The tool's answer went back to Kimi as a tool message answering the K2 call.
    second = fake_upstream.kimi.requests[1].body
    assert [m["role"] for m in second["messages"]][-2:] == ["assistant", "tool"]


async def test_a_model_switch_mid_scenario_continues_the_same_tool_loop(fake_upstream: FakeUpstream) -> None:
    fake_upstream.kimi.enqueue(
        kimi_tool_calls([("functions.lookup_order:0", "lookup_order", '{"order_id": "12345"}')]),
        kimi_text("I see two charges. Refund the second?"),
    )
    fake_upstream.anthropic.enqueue(
        anthropic_tool_use([("toolu_01", "lookup_order", {"order_id": "12345"})]), anthropic_text("Refunded.")
    )
    turns = [
        {"label": "ask", "user": "I was charged twice for order 12345."},
        {"label": "confirm", "user": "Yes, refund it.", "model": "claude:claude-sonnet-4-5"},
    ]
    report = await run_scenario(scenario(turns=turns, expect=[{"type": "final_text", "contains": ["Refunded"]}]))
    [run] = report.models[0].results
    assert run.status == "passed", run.assertions
    assert fake_upstream.violations == []
    claude_body = fake_upstream.anthropic.requests[0].body
    assert sum(1 for m in claude_body["messages"] for b in m["content"] if b.get("type") == "tool_use") == 1


async def test_a_scenario_with_a_response_schema_asserts_on_parsed(fake_upstream: FakeUpstream) -> None:
    """params.response_schema makes each step a structured call: the answer that missed the schema is
    repaired once (not a tool-calling repair), and `parsed` is what the assertion reads."""
    schema = {
        "type": "object",
        "properties": {"category": {"enum": ["billing", "bug"]}, "refund": {"type": "boolean"}},
        "required": ["category"],
    }
    fake_upstream.anthropic.enqueue(
        anthropic_text('{"category": "refunds", "refund": null}'),
        anthropic_text('{"category": "billing", "refund": null}'),
    )
    expect = [
        {"type": "parsed", "equals": {"category": "billing"}},
        {"type": "parsed", "contains": {"category": "bug"}, "soft": True},
        {"type": "clean_protocol"},
    ]
    report = await run_scenario(
        scenario(models=["claude:claude-sonnet-4-5"], tools=[], params={"response_schema": schema}, expect=expect)
    )
    [run] = report.models[0].results
    assert [(a.type, a.passed) for a in run.assertions] == [
        ("parsed", True),
        ("parsed", False),
        ("clean_protocol", True),
    ]
    assert fake_upstream.violations == []
    assert "output_config" in fake_upstream.anthropic.requests[0].body
