"""The seed's run_conversation on the same loop, without the seed's bugs."""

from __future__ import annotations

from typing import Any

import pytest
from agent_fakes import ScriptedCaller, calls, text

from colibri_router.testing import InvalidInput, ScenarioError, run_conversation

REQUEST: dict[str, Any] = {
    "system": "You look up orders.",
    "messages": [{"role": "user", "content": "Where is order 12345?"}],
    "tools": [
        {"name": "lookup_order", "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
    ],
    "params": {"max_tokens": 200},
}
SIMULATIONS = [{"name": "lookup_order", "responses": [{"when": {"order_id": "12345"}, "then": "shipped"}]}]


async def test_the_seeds_result_from_the_shared_loop() -> None:
    caller = ScriptedCaller(
        {
            "kimi": [
                calls(("lookup_order", {"order_id": "12345"}), usage={"prompt_tokens": 7}, latency_ms=5),
                text("It shipped.", usage={"prompt_tokens": 9}, latency_ms=6),
            ]
        }
    )
    result = await run_conversation("kimi", REQUEST, SIMULATIONS, caller=caller)
    assert (result.final_text, result.stop_reason, len(result.turns)) == ("It shipped.", "end_turn", 2)
    assert [(c.name, c.input, c.result) for c in result.all_tool_calls] == [
        ("lookup_order", {"order_id": "12345"}, "shipped")
    ]
    assert (result.total_usage, result.total_latency_ms) == ({"prompt_tokens": 16}, 11)
    second = caller.calls[1]
    assert second.system == "You look up orders."
    assert second.params == {"max_tokens": 200}
    assert second.messages[1]["content"][0]["type"] == "tool_use"  # the calls stay in the assistant turn
    assert second.messages[2]["content"][0]["content"] == "shipped"  # a string then is not JSON-encoded again


async def test_max_turns_bounds_the_model_calls() -> None:
    caller = ScriptedCaller({"kimi": lambda call: calls(("lookup_order", {"order_id": "1"}))})
    result = await run_conversation("kimi", REQUEST, SIMULATIONS, max_turns=2, caller=caller)
    assert (result.stop_reason, result.truncated, len(caller.calls)) == ("max_steps", True, 2)
    assert result.all_tool_calls[0].problem == "unmatched"


async def test_bad_requests_are_refused() -> None:
    caller = ScriptedCaller({"kimi": [text("x")]})
    with pytest.raises(InvalidInput, match="does not declare"):
        await run_conversation("kimi", REQUEST, [{"name": "ghost"}], caller=caller)
    with pytest.raises(InvalidInput, match="unknown"):
        await run_conversation("kimi", {**REQUEST, "model": "x"}, SIMULATIONS, caller=caller)
    with pytest.raises(ScenarioError):
        await run_conversation(
            "kimi", {**REQUEST, "messages": [{"role": "assistant", "content": "x"}]}, [], caller=caller
        )
    with pytest.raises(ScenarioError):
        await run_conversation("kimi", REQUEST, SIMULATIONS, max_turns=51, caller=caller)
    assert caller.calls == []
