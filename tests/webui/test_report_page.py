"""The agent-testing report (``run --format html``, issue 37 §3) in the same headless Chromium as the
``/ui`` pages: a run recorded by the real ``colibri-router run`` against the loopback fake upstream
(two models, two repeats, runs that part at the second step), replayed offline into the JSON report
and the page in one command, then opened from disk. The page loads nothing; each model's figures, as
the browser shows them, are the JSON report's; the first divergence is highlighted; axe-core finds no
serious violation, in light and dark colours; the page fits 1280 px and a phone.

``UI_SCREENSHOTS=DIR`` also saves the page's screenshot there (``docs/agent-report.png``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser_support import DESKTOP, PHONE, axe_source
from fake_upstream import FakeUpstream, anthropic_text, anthropic_tool_use, kimi_text, kimi_tool_calls
from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.e2e

COMMAND = str(Path(sys.executable).with_name("colibri-router"))
KIMI = "kimi:kimi-k2-0905-preview"
CLAUDE = "claude:claude-sonnet-4-5"
SCENARIO = {
    "colibri": 1,
    "name": "order lookup",
    "models": [KIMI, CLAUDE],
    "repeat": 2,
    "prompt": "Look up order 12345 and tell me where it is.",
    "tools": [
        {
            "name": "lookup_order",
            "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "responses": [{"when": {"order_id": "12345"}, "then": "shipped"}],
        }
    ],
    "expect": [
        {"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345"}},
        {"type": "final_text", "contains": ["shipped"]},
    ],
}


@dataclass(frozen=True, slots=True)
class Recorded:
    """The page and the JSON report written by one replay of the recorded run."""

    page: Path
    report: dict[str, Any]


def _lookup_kimi(order: str, call: int = 0) -> Any:
    return kimi_tool_calls([(f"functions.lookup_order:{call}", "lookup_order", json.dumps({"order_id": order}))])


def _script(fake: FakeUpstream) -> None:
    """Kimi passes twice, its second run looking the order up twice (the runs part at step 2);
    Claude passes once, then looks up the wrong order and fails."""
    fake.kimi.enqueue(_lookup_kimi("12345"), kimi_text("Order 12345 has shipped."))
    fake.kimi.enqueue(_lookup_kimi("12345"), _lookup_kimi("12345", 1), kimi_text("It has shipped."))
    fake.anthropic.enqueue(
        anthropic_tool_use([("toolu_01", "lookup_order", {"order_id": "12345"})]),
        anthropic_text("Your order has shipped."),
        anthropic_tool_use([("toolu_02", "lookup_order", {"order_id": "999"})]),
        anthropic_text("I could not find that order."),
    )


def _cli(env: dict[str, str], *args: str) -> None:
    done = subprocess.run([COMMAND, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode in (0, 1), done.stderr  # 1: a scenario failed, as Claude's second run does


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Recorded against the fake, then replayed with every provider pointed at a closed port."""
    directory = tmp_path_factory.mktemp("report")
    scenario = directory / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    recording, report_json, report_html = (directory / name for name in ("calls.jsonl", "report.json", "report.html"))
    with FakeUpstream() as fake:
        _script(fake)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(directory),
            "XDG_CONFIG_HOME": str(directory / "config"),
            "COLIBRI_STATE_DIR": str(directory / "state"),
            "COLIBRI_KIMI_API_KEY": "sk-kimi-report-page-0123456789",
            "COLIBRI_KIMI_BASE_URL": fake.kimi_base_url,
            "ANTHROPIC_API_KEY": "sk-ant-report-page-0123456789",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        }
        _cli(env, "run", str(scenario), "--record", str(recording), "--concurrency", "1")
    offline = env | {"COLIBRI_KIMI_BASE_URL": "http://127.0.0.1:9/", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
    _cli(
        offline,
        *("run", str(scenario), "--replay", str(recording), "--concurrency", "1"),
        *("--format", "json", "--out", str(report_json), "--format", "html", "--out", str(report_html)),
    )
    (report,) = json.loads(report_json.read_text(encoding="utf-8"))
    return Recorded(report_html, report)


def open_offline(browser: Browser, recorded: Recorded, **options: Any) -> tuple[Page, list[str]]:
    """The page from disk, every request it makes recorded and anything but the file itself refused.
    The page's own CSP is bypassed (as for axe-core), so it cannot hide an attempt by blocking it."""
    context = browser.new_context(bypass_csp=True, **options)
    attempts: list[str] = []
    context.on("request", lambda request: attempts.append(request.url))
    address = recorded.page.as_uri()
    context.route(
        "**/*", lambda route: route.continue_() if route.request.url == address else route.abort("blockedbyclient")
    )
    page = context.new_page()
    page.goto(address)
    return page, attempts


def models_table(page: Page) -> dict[str, dict[str, str]]:
    """The models table as shown: model name → column header → the cell's visible text."""
    table = page.locator("section table").first
    header = [text.strip() for text in table.locator("thead th").all_inner_texts()]
    rows = [
        [text.strip() for text in row.locator("th, td").all_inner_texts()] for row in table.locator("tbody tr").all()
    ]
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def expected_divergence(report: dict[str, Any]) -> int | None:
    """From the JSON alone: the first step where the runs' paths through the tools part."""
    paths = [[sorted(step) for step in run["trajectory"]] for model in report["models"] for run in model["results"]]
    for index in range(max(len(path) for path in paths)):
        if len({json.dumps(path[index] if index < len(path) else None) for path in paths}) > 1:
            return index + 1
    return None


def test_the_page_opens_from_disk_and_requests_nothing(browser: Browser, recorded: Recorded) -> None:
    page, attempts = open_offline(browser, recorded, viewport=DESKTOP)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.reload()
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")  # every run's steps
    page.wait_for_load_state("networkidle")
    assert set(attempts) == {recorded.page.as_uri()}, attempts  # the file itself, and nothing else
    assert errors == []
    assert page.title() == "colibri-router run: order lookup"
    page.context.close()


def test_each_models_figures_are_the_json_reports(browser: Browser, recorded: Recorded) -> None:
    for viewport in (DESKTOP, PHONE):
        page, _ = open_offline(browser, recorded, viewport=viewport)
        shown = models_table(page)
        assert list(shown) == [KIMI, CLAUDE]
        for model in recorded.report["models"]:
            row = shown[model["model"]]
            assert row["Passed"] == f"{model['passed']}/{model['runs']}"
            assert row["Pass rate"] == f"{model['pass_rate']:.2f}"
            for k, value in model["pass_at_k"].items():
                assert row[f"pass@{k}"] == f"{value:.2f}"
            for k, value in model["pass_hat_k"].items():
                assert row[f"pass^{k}"] == f"{value:.2f}"
            assert row["Cost"] == f"${model['cost_usd']:.4f}"
            assert row["Latency p50"] == f"{model['latency_ms']['p50']:,} ms"
            assert row["Latency max"] == f"{model['latency_ms']['max']:,} ms"
            assert model["verdict"] in row["Verdict"].lower()  # shown in capitals
            bar = page.get_by_role("img", name=f"pass rate {model['pass_rate']:.0%}")
            assert bar.count() >= 1 and bar.first.is_visible()
        # The run above: Kimi passed both runs, Claude one of two (pass@2 is then 1).
        assert (shown[KIMI]["Passed"], shown[CLAUDE]["Passed"]) == ("2/2", "1/2")
        assert (shown[CLAUDE]["pass@1"], shown[CLAUDE]["pass@2"], shown[CLAUDE]["pass^2"]) == ("0.50", "1.00", "0.00")
        assert float(recorded.report["models"][0]["cost_usd"]) > 0  # priced: the cost cell is a real figure
        page.context.close()


def test_the_first_divergence_is_highlighted(browser: Browser, recorded: Recorded) -> None:
    page, _ = open_offline(browser, recorded, viewport=DESKTOP)
    step = expected_divergence(recorded.report)
    assert step == 2  # Kimi's second run looked the order up again
    marked = page.locator("tr.diverge")
    assert marked.count() == 1
    assert marked.locator("th").inner_text() == f"{step} ◀ first divergence"
    assert marked.locator("td").all_inner_texts() == ["(ended)", "lookup_order", "(ended)", "(ended)"]
    assert page.get_by_text(f"The runs part at step {step} (highlighted).").is_visible()
    # Highlighted: its cells are painted, unlike the rows around it.
    background = "(cell) => getComputedStyle(cell).backgroundColor"
    plain = marked.locator("xpath=preceding-sibling::tr[1]").locator("td").first  # step 1
    assert marked.locator("td").first.evaluate(background) not in ("rgba(0, 0, 0, 0)", plain.evaluate(background))
    page.context.close()


def test_axe_finds_nothing_serious_in_light_or_dark(browser: Browser, recorded: Recorded) -> None:
    axe = axe_source()
    problems: list[str] = []
    for scheme in ("light", "dark"):
        for viewport in (DESKTOP, PHONE):
            page, _ = open_offline(browser, recorded, viewport=viewport, color_scheme=scheme)
            page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
            page.add_script_tag(content=axe)
            result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
            for violation in result["violations"]:
                if violation["impact"] in ("serious", "critical"):
                    targets = [node["target"] for node in violation["nodes"]][:5]
                    where = f"{scheme} at {viewport['width']} px"
                    problems.append(
                        f"{where}: {violation['id']} ({violation['impact']}): {violation['help']} {targets}"
                    )
            page.context.close()
    assert not problems, "\n".join(problems)


def test_the_page_fits_1280_px_and_a_phone(browser: Browser, recorded: Recorded) -> None:
    keep = os.environ.get("UI_SCREENSHOTS")
    for viewport in (DESKTOP, PHONE):
        page, _ = open_offline(browser, recorded, viewport=viewport)
        for opened in (False, True):
            if opened:
                page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"the page is {overflow} px wider than a {viewport['width']} px window"
            # Readable: the text is no smaller than 12 px anywhere, and the models' names are on screen.
            smallest = page.evaluate(
                "Math.min(...[...document.body.querySelectorAll('*')].filter((el) => el.innerText)"
                ".map((el) => parseFloat(getComputedStyle(el).fontSize)))"
            )
            assert smallest >= 12, smallest
            assert page.locator("section table tbody th").first.is_visible()
        if viewport is DESKTOP:  # at 1280 px each table fits whole; on a phone, its region scrolls sideways
            hidden = page.locator("div.scroll").evaluate_all(
                "(boxes) => boxes.map((b) => b.scrollWidth - b.clientWidth)"
            )
            assert max(hidden) <= 0, f"tables wider than their box at 1280 px by {hidden} px"
        if keep and viewport is DESKTOP:
            page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = false; })")
            page.screenshot(path=str(Path(keep) / "agent-report.png"), full_page=True)
        page.context.close()
