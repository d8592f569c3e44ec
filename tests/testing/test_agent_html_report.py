"""The HTML report (issue 37 §3): generated from a recorded run, it parses as well-formed HTML, loads
nothing (no script, no external URL, a CSP that forbids fetching), escapes what runs produced, and
shows each model's figures, the runs' trajectories side by side with the first divergence marked,
and the judge's reasons."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agent_fakes import ScriptedCaller, calls, scenario, text
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.testing import ModelCall, ModelStep, Recorder, Replayer, Report, render_html, run_scenario
from colibri_router.testing.html_report import first_divergence

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Elements that load something, run something, or embed another document: none may appear.
FORBIDDEN = {"script", "link", "img", "iframe", "object", "embed", "video", "audio", "source", "base", "form"}
URL_ATTRIBUTES = {"src", "href", "action", "srcset", "poster", "data", "formaction", "xlink:href", "background"}
ODD_MODEL = 'odd<b>"model"</b>&'
HOSTILE = "<script>alert(1)</script> <img src=https://example.invalid/x.png> see https://example.invalid"


class Page(HTMLParser):
    """A strict reading: every element closed in order, the tables as rows of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []
        self.row_classes: list[tuple[str | None, list[str]]] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._row_class: str | None = None
        self.text: list[str] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row, self._row_class = [], dict(attrs).get("class")
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "style":
            self._in_style = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))  # <rect .../> in inline SVG

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self.row_classes.append((self._row_class, self._row))
            self._row = None
        elif tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        if self._cell is not None:
            self._cell.append(data)
        self.text.append(data)


def parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    parser.close()
    assert parser.problems == [] and parser.stack == [], (parser.problems, parser.stack)
    return parser


def two_models_three_repeats() -> dict[str, Any]:
    """Two models that part at the second tool step, three repeats, a judge with its reasons."""
    return scenario(
        name="refund <lookup> & co",
        models=["kimi", ODD_MODEL],
        repeat=3,
        expect=[
            {"type": "tool_called", "tool": "lookup_order", "args": {"order_id": "12345"}},
            {"type": "judge", "rubric": "Says the order shipped.", "model": "judge"},
        ],
    )


async def reports_from_a_recording(tmp_path: Path) -> list[Report]:
    document = two_models_three_repeats()
    recording = tmp_path / "calls.jsonl"

    def kimi(call: ModelCall) -> ModelStep:
        if call.origin.step == 1:
            return calls(("lookup_order", {"order_id": "12345"}), cost_usd=0.0021, latency_ms=400)
        if call.origin.step == 2 and call.origin.repeat == 3:
            return calls(("lookup_order", {"order_id": "12345"}), cost_usd=0.001, latency_ms=300)
        return text("Order 12345 has shipped.", cost_usd=0.001, latency_ms=200)

    def odd(call: ModelCall) -> ModelStep:
        if call.origin.step == 1:
            return calls(("lookup_order", {"order_id": "999"}), cost_usd=0.05, latency_ms=900)
        return text(HOSTILE, cost_usd=0.02, latency_ms=700)

    def judge(call: ModelCall) -> ModelStep:
        shipped = "has shipped" in str(call.messages)
        reason = "it says the order shipped" if shipped else "it never says the order shipped"
        return text(f'{{"score": {0.9 if shipped else 0.1}, "reason": "{reason}"}}', cost_usd=0.0005)

    live = ScriptedCaller({"kimi": kimi, ODD_MODEL: odd, "judge": judge})
    recorded = await run_scenario(document, caller=Recorder(live, recording))
    replayed = await run_scenario(document, caller=Replayer.load(recording))
    assert replayed.model_dump() == recorded.model_dump()
    return [replayed]


async def test_the_page_is_well_formed_and_loads_nothing(tmp_path: Path) -> None:
    page = render_html(await reports_from_a_recording(tmp_path))
    parsed = parse(page)
    assert page.startswith("<!DOCTYPE html>")
    names = [tag for tag, _ in parsed.tags]
    assert not FORBIDDEN & set(names), FORBIDDEN & set(names)
    for tag, attrs in parsed.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)  # no inline script either
            if name in URL_ATTRIBUTES:
                assert value is not None and value.startswith("#"), (tag, name, value)  # in-page anchors only
            assert "url(" not in (value or "").lower(), (tag, name, value)
    assert "url(" not in parsed.style and "@import" not in parsed.style
    csp = [attrs["content"] for tag, attrs in parsed.tags if tag == "meta" and attrs.get("http-equiv")]
    assert csp == ["default-src 'none'; style-src 'unsafe-inline'; img-src data:"]
    # The only http(s) text is what the model wrote, shown as text: never markup.
    assert HOSTILE in "".join(parsed.text)
    without_model_text = page.replace("https://example.invalid", "")
    assert not re.search(r"(?i)https?:|//[a-z0-9]", without_model_text.replace("&#x27;", "'"))


async def test_each_models_figures_are_shown(tmp_path: Path) -> None:
    (report,) = await reports_from_a_recording(tmp_path)
    parsed = parse(render_html([report]))
    models_table = parsed.tables[0]
    header = models_table[0]
    assert header[:4] == ["Model", "Verdict", "Passed", "Pass rate"]
    assert {"pass@1", "pass@2", "pass@3", "pass^3", "Cost", "Latency p50", "Latency max"} <= set(header)
    rows = {row[0]: dict(zip(header, row, strict=True)) for row in models_table[1:]}
    assert set(rows) == {"kimi", ODD_MODEL}  # the odd name shown as text, not markup
    for model in report.models:
        row = rows[model.model]
        assert row["Passed"].startswith(f"{model.passed}/{model.runs}")
        assert row["Pass rate"] == f"{model.pass_rate:.2f}"
        for k, value in model.pass_at_k.items():
            assert row[f"pass@{k}"] == ("—" if value is None else f"{value:.2f}")
        for k, value in model.pass_hat_k.items():
            assert row[f"pass^{k}"] == ("—" if value is None else f"{value:.2f}")
        assert row["Cost"] == f"${model.cost_usd:.4f}" and row["Judge cost"] == f"${model.judge_cost_usd:.4f}"
        assert (
            row["Latency p50"] == f"{model.latency_ms.p50:,} ms"
            and row["Latency max"] == f"{model.latency_ms.max:,} ms"
        )
        assert model.verdict in row["Verdict"]
    assert rows["kimi"]["Passed"] == "3/3" and rows[ODD_MODEL]["Passed"] == "0/3"


async def test_trajectories_side_by_side_with_the_first_divergence_marked(tmp_path: Path) -> None:
    (report,) = await reports_from_a_recording(tmp_path)
    parsed = parse(render_html([report]))
    runs = [run for model in report.models for run in model.results]
    trajectory = next(table for table in parsed.tables if table[0][0] == "Step")
    assert len(trajectory[0]) == 1 + len(runs)  # one column per run
    assert [cell.split(" ")[-2:] for cell in trajectory[0][1:]] == [["✓", "passed"]] * 3 + [["✗", "failed"]] * 3
    # Kimi's third repeat looks the order up twice: every run called lookup_order first, the runs part at step 2.
    assert first_divergence(runs) == 2
    marked = [row for css, row in parsed.row_classes if css == "diverge"]
    assert marked == [["2 ◀ first divergence", "(ended)", "(ended)", "lookup_order", "(ended)", "(ended)", "(ended)"]]
    assert trajectory[1][1:] == ["lookup_order"] * 6
    # Against the reference (the first model): same path through the tools, different arguments.
    assert any("order_id" in " ".join(row) and "999" in " ".join(row) for row in parsed.tables[1])


async def test_the_judges_reasons_and_failures_are_shown(tmp_path: Path) -> None:
    (report,) = await reports_from_a_recording(tmp_path)
    page = render_html([report])
    parsed = parse(page)
    text = " ".join(" ".join(parsed.text).split())
    assert "it says the order shipped" in text and "it never says the order shipped" in text
    judged = [attrs for tag, attrs in parsed.tags if tag == "li" and "judge" in (attrs.get("class") or "")]
    assert len(judged) == len(report.models) * 3  # one judge verdict per run
    for model in report.models:
        for failure in model.failures:
            assert " ".join(failure.message.split()) in text


async def test_several_scenarios_get_a_table_of_contents_and_none_still_makes_a_page(tmp_path: Path) -> None:
    (report,) = await reports_from_a_recording(tmp_path)
    other = report.model_copy(update={"scenario": "second"})
    parsed = parse(render_html([report, other]))
    links = [attrs["href"] for tag, attrs in parsed.tags if tag == "a"]
    sections = {attrs.get("id") for tag, attrs in parsed.tags if tag == "section"}
    assert links == ["#scenario-1", "#scenario-2"] and {link[1:] for link in links} <= sections
    assert "0 scenarios (none), 0 runs" in " ".join(parse(render_html([])).text)


@given(st.lists(st.lists(st.lists(st.sampled_from("abc"), max_size=2), max_size=4), min_size=1, max_size=5))
def test_first_divergence_is_the_first_step_where_the_paths_part(paths: list[list[list[str]]]) -> None:
    runs: Any = [SimpleNamespace(trajectory=path) for path in paths]
    found = first_divergence(runs)
    normal = [[tuple(sorted(step)) for step in path] for path in paths]
    if len(paths) < 2 or all(path == normal[0] for path in normal):
        assert found is None
        return
    assert found is not None
    before = {tuple(path[: found - 1]) for path in normal}
    assert len(before) == 1  # the same up to there
    at = {path[found - 1] if found - 1 < len(path) else None for path in normal}
    assert len(at) > 1  # and parted there


async def test_errored_runs_and_runs_without_tools_are_shown() -> None:
    from test_agent_render import two_reports

    reports = await two_reports()
    parsed = parse(render_html(reports))
    text = " ".join(" ".join(parsed.text).split())
    assert "Error: KIMI_API_ERROR (RATE_LIMITED) upstream said no" in text
    assert "Every run took the same path through the tools." in text  # none called a tool
    refund, broken = (table for table in parsed.tables if table[0][:2] == ["Model", "Verdict"])
    assert [row[0] for row in refund[1:]] == ["kimi", "claude"]
    errored = broken[1]
    assert errored[0] == "kimi" and "error" in errored[1]
    assert errored[2] == "0/1 (1 errored)" and errored[3] == "—"
