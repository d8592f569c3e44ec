"""The example scenarios shipped in examples/scenarios/ load, validate, and run as docs/agent-testing.md describes."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_fakes import ScriptedCaller, calls, text

from colibri_router.testing import load_scenario, run_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


def test_there_are_two_examples() -> None:
    assert sorted(path.name for path in EXAMPLES.glob("*.yaml")) == [
        "refund-double-charge.yaml",
        "weather-packing.yaml",
    ]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda path: path.stem)
def test_each_example_loads_and_validates(path: Path) -> None:
    loaded = load_scenario(path)
    assert loaded.name == path.stem
    assert loaded.expect


async def test_the_refund_example_passes_a_model_that_refunds_once() -> None:
    refunds = [
        calls(("lookup_order", {"order_id": "12345"})),
        text("I see two charges of 40, c1 and c2. Shall I refund c2?"),
        calls(("issue_refund", {"charge_id": "c2"})),
        text("Done: the duplicate charge is refunded."),
    ]
    report = await run_scenario(
        EXAMPLES / "refund-double-charge.yaml",
        caller=ScriptedCaller({"kimi": refunds, "claude:claude-sonnet-4-5": refunds}),
        models=["kimi"],
        repeat=1,
    )
    run = report.models[0].results[0]
    assert run.status == "passed", run.assertions
    assert [call.result for call in run.all_tool_calls] == [
        '{"charges":[{"id":"c1","amount":40},{"id":"c2","amount":40}]}',
        '{"status":"refunded"}',
    ]
    assert report.coverage.rules_never_hit == ["lookup_order.responses[1]", "lookup_order.defaultResponse"]


async def test_the_weather_example_fills_templates_and_accepts_a_parallel_step() -> None:
    forecasts = calls(
        ("get_forecast", {"city": "Oslo", "day": "sunday"}), ("get_forecast", {"city": "Paris", "day": "saturday"})
    )
    caller = ScriptedCaller(
        {
            "kimi": [forecasts, text("Paris: rain, take an umbrella. Oslo: snow, take a warm coat.")],
            "claude:claude-sonnet-4-5": {6: text('{"score": 1, "reason": "fits"}')},
        }
    )
    report = await run_scenario(EXAMPLES / "weather-packing.yaml", caller=caller, models=["kimi"], repeat=1)
    run = report.models[0].results[0]
    assert run.status == "passed", run.assertions
    assert run.all_tool_calls[0].result == '{"city":"Oslo","day":"sunday","sky":"snow","high_c":-3}'
