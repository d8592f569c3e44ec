"""The pretty table and JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from agent_fakes import ScriptedCaller, failing, scenario, text

from colibri_router.testing import ModelCall, ModelStep, Report, render_junit, render_pretty, run_scenario


async def two_reports() -> list[Report]:
    expect = [{"type": "final_text", "contains": "refund", "label": "mentions refund"}]

    def flaky(call: ModelCall) -> ModelStep:
        return text("refund done" if call.origin.repeat != 2 else "no", cost_usd=0.0013)

    refund = await run_scenario(
        scenario(name="refund", models=["kimi", "claude"], repeat=3, expect=expect),
        caller=ScriptedCaller({"kimi": flaky, "claude": [text("refund done", cost_usd=0.007)]}),
    )
    broken = await run_scenario(
        scenario(name="broken & <odd>", models=["kimi", "gpt"]),
        caller=ScriptedCaller({"kimi": failing(), "gpt": [text("ok")]}),
    )
    return [refund, broken]


async def test_pretty_shows_one_row_per_scenario_and_one_column_per_model() -> None:
    table = render_pretty(await two_reports())
    lines = table.splitlines()
    assert lines[0].split() == ["scenario", "kimi", "claude", "gpt"]
    assert lines[1].split() == ["refund", "2/3", "✗", "$0.004", "3/3", "✓", "$0.021", "—"]
    assert lines[2].split()[-8:] == ["<odd>", "0/1", "⚠", "$0.000", "—", "1/1", "✓", "$0.000"]
    assert "  refund · kimi · repeat 2 · final_text 'mentions refund': the final text fails: contains 'refund'" in lines
    assert any("broken & <odd> · kimi · repeat 1 · error KIMI_API_ERROR (RATE_LIMITED)" in line for line in lines)


async def test_junit_has_a_suite_per_scenario_and_a_case_per_model() -> None:
    xml = render_junit(await two_reports())
    root = ET.fromstring(xml)
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == ("testsuites", "4", "1", "1")
    suites = root.findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["refund", "broken & <odd>"]
    refund_cases = suites[0].findall("testcase")
    assert [(case.get("classname"), case.get("name")) for case in refund_cases] == [
        ("refund", "kimi"),
        ("refund", "claude"),
    ]
    failure = refund_cases[0].find("failure")
    assert failure is not None
    assert failure.get("message") == "2/3 runs passed, 0 errored (min pass rate 1)"
    assert "repeat 2 · final_text" in (failure.text or "")
    assert refund_cases[1].find("failure") is None
    error = suites[1].findall("testcase")[0].find("error")
    assert error is not None
    assert "KIMI_API_ERROR" in (error.text or "")
    assert suites[1].findall("testcase")[1].find("error") is None
