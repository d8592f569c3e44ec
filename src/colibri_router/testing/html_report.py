"""The agent-testing report as one self-contained HTML page (``run --format html --out report.html``).

Per scenario: each model's verdict, pass rate (drawn as an inline SVG bar), ``pass@k`` and ``pass^k``,
cost and latency; how each model's typical trajectory departs from the reference's; every run's
trajectory side by side, one column per run, with the first step where the runs part highlighted;
then each run's assertions (the judge's reasons among them), its steps and tool calls, and the
coverage of the simulated tools.

The page opens from disk with no network: the CSS is inline, there is no script, no image file and
no external URL, and a Content-Security-Policy forbids loading anything. Every text that comes from
a run (model output, tool input, names) goes through :func:`html.escape`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from colibri_router import __version__
from colibri_router.testing.report import ModelReport, Report, RunReport
from colibri_router.testing.transcript import StepRecord, ToolCallRecord

# Nothing may be fetched: styles are inline, images are inline SVG.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
TEXT_PREVIEW_CHARS = 160
BAR_WIDTH = 80  # narrow enough that the models table fits 1280 px beside the pass@k columns

STYLE = """
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #57606a; --line: #d0d7de;
  --pass: #1a7f37; --fail: #cf222e; --error: #9a6700; --mark: #fff3b0; --panel: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3;
  --line: #3d444d; --pass: #3fb950; --fail: #ff7b72; --error: #d29922; --mark: #4b3d00; --panel: #161b22; } }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; padding: 1.5rem; max-width: 80rem; }
@media (max-width: 40rem) { body { padding: 1rem .75rem; } }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.25rem; margin-top: 2.5rem; }
h3 { font-size: 1.05rem; margin-top: 1.5rem; }
.muted { color: var(--muted); }
.scroll { overflow-x: auto; }
.scroll:focus-visible, summary:focus-visible, a:focus-visible { outline: 2px solid var(--fg); outline-offset: 2px; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .55rem; text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.verdict { font-weight: 700; text-transform: uppercase; font-size: .8rem; letter-spacing: .04em; }
.pass { color: var(--pass); } .fail { color: var(--fail); } .error { color: var(--error); }
tr.diverge > * { background: var(--mark); }
code, pre { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--panel); padding: .5rem;
  margin: .25rem 0; border-radius: 4px; }
details { border: 1px solid var(--line); border-radius: 4px; padding: .4rem .7rem; margin: .4rem 0; }
summary { cursor: pointer; }
ul.assertions { padding-left: 1.2rem; } ul.assertions li { margin: .15rem 0; }
.judge { font-style: italic; }
svg.bar { vertical-align: middle; }
svg.bar .track { fill: var(--line); } svg.bar .fill { fill: var(--pass); }
"""

FLAKY = " <span class='muted'>(flaky)</span>"
PARTED = " class='error'"
_MARKS = {"passed": "✓", "failed": "✗", "error": "⚠", "pass": "✓", "fail": "✗"}


def e(value: object) -> str:
    """Text or an attribute value, escaped (quotes too)."""
    return html.escape(str(value), quote=True)


def render_html(reports: Sequence[Report]) -> str:
    scenarios = "\n".join(_scenario(index, report) for index, report in enumerate(reports, start=1))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(_title(reports))}</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>Agent-testing report</h1>
<p class="muted">{e(_overview(reports))}</p>
{_contents(reports)}
</header>
<main>
{scenarios}
</main>
<footer><p class="muted">Written by colibri-router {e(__version__)}.</p></footer>
</body>
</html>
"""


def _title(reports: Sequence[Report]) -> str:
    names = ", ".join(report.scenario for report in reports)
    return f"colibri-router run: {names}" if names else "colibri-router run"


def _overview(reports: Sequence[Report]) -> str:
    runs = sum(report.totals.runs for report in reports)
    cost = sum(report.totals.cost_usd + report.totals.judge_cost_usd for report in reports)
    verdicts = [report.verdict for report in reports]
    counts = ", ".join(f"{verdicts.count(v)} {v}" for v in ("pass", "fail", "error") if v in verdicts)
    return f"{len(reports)} scenario{'s' * (len(reports) != 1)} ({counts or 'none'}), {runs} runs, ${cost:.4f} in all"


def _contents(reports: Sequence[Report]) -> str:
    if len(reports) < 2:
        return ""
    items = "".join(
        f'<li><a href="#scenario-{index}">{e(report.scenario)}</a> '
        f'<span class="verdict {e(report.verdict)}">{e(report.verdict)}</span></li>'
        for index, report in enumerate(reports, start=1)
    )
    return f'<nav aria-label="Scenarios"><ul>{items}</ul></nav>'


def _scenario(index: int, report: Report) -> str:
    runs = [run for model in report.models for run in model.results]
    parts = [
        f'<section id="scenario-{index}" aria-labelledby="scenario-{index}-title">',
        f'<h2 id="scenario-{index}-title">{e(report.scenario)} '
        f'<span class="verdict {e(report.verdict)}">{e(report.verdict)}</span></h2>',
        f'<p class="muted">Minimum pass rate {report.min_pass_rate:g}; {report.totals.runs} runs, '
        f"{report.totals.steps} model calls, {report.totals.tool_calls} tool calls.</p>",
        "<h3>Models</h3>",
        _models_table(report.scenario, report.models),
        _comparison(report),
        "<h3>Trajectories</h3>",
        _trajectories(report.scenario, runs),
        "<h3>Runs</h3>",
        *(_run(run) for run in runs),
        _coverage(report),
        "</section>",
    ]
    return "\n".join(part for part in parts if part)


def _models_table(scenario: str, models: Sequence[ModelReport]) -> str:
    depth = max((len(model.pass_at_k) for model in models), default=0)
    ks = range(1, depth + 1)
    head = (
        "<tr><th scope='col'>Model</th><th scope='col'>Verdict</th><th scope='col'>Passed</th>"
        "<th scope='col'>Pass rate</th>"
        + "".join(f"<th scope='col'>pass@{k}</th>" for k in ks)
        + "".join(f"<th scope='col'>pass^{k}</th>" for k in ks)
        + "<th scope='col'>Cost</th><th scope='col'>Judge cost</th><th scope='col'>Latency p50</th>"
        "<th scope='col'>Latency max</th><th scope='col'>Trajectories</th></tr>"
    )
    rows = []
    for model in models:
        cells = [
            f"<th scope='row'>{e(model.model)}</th>",
            f"<td><span class='verdict {e(model.verdict)}'>{_MARKS.get(model.verdict, '')} {e(model.verdict)}</span>"
            f"{FLAKY if model.flaky else ''}</td>",
            f"<td class='num'>{model.passed}/{model.runs}{f' ({model.errors} errored)' if model.errors else ''}</td>",
            f"<td class='num'>{_rate_bar(model.pass_rate)} {_fraction(model.pass_rate)}</td>",
            *(f"<td class='num'>{_fraction(model.pass_at_k.get(k))}</td>" for k in ks),
            *(f"<td class='num'>{_fraction(model.pass_hat_k.get(k))}</td>" for k in ks),
            f"<td class='num'>${model.cost_usd:.4f}</td>",
            f"<td class='num'>${model.judge_cost_usd:.4f}</td>",
            f"<td class='num'>{_ms(model.latency_ms.p50)}</td>",
            f"<td class='num'>{_ms(model.latency_ms.max)}</td>",
            f"<td class='num'>{model.distinct_trajectories}</td>",
        ]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return _table(f"Models, {scenario}", head, rows)


def _table(label: str, head: str, rows: Sequence[str]) -> str:
    """A table that scrolls sideways when it is wider than the window: the scrolling box is a named
    region the keyboard can focus, so it can be scrolled without a mouse."""
    return (
        f"<div class='scroll' role='region' aria-label='{e(label)}' tabindex='0'>"
        f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _rate_bar(rate: float | None) -> str:
    """The pass rate as a bar, inline SVG (no image file, no script)."""
    filled = 0 if rate is None else round(BAR_WIDTH * rate)
    label = "no scored run" if rate is None else f"pass rate {rate:.0%}"
    return (
        f"<svg class='bar' width='{BAR_WIDTH}' height='10' viewBox='0 0 {BAR_WIDTH} 10' role='img' "
        f"aria-label='{e(label)}'><rect class='track' width='{BAR_WIDTH}' height='10' rx='2'/>"
        f"<rect class='fill' width='{filled}' height='10' rx='2'/></svg>"
    )


def _fraction(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _ms(value: int | None) -> str:
    return "—" if value is None else f"{value:,} ms"


def _comparison(report: Report) -> str:
    if not report.comparison:
        return ""
    rows = []
    for item in report.comparison:
        if item.same_trajectory:
            where = "same trajectory"
        else:
            where = f"step {item.diverges_at}: {_tools(item.reference_step)} (reference) vs {_tools(item.step)}"
        differences = "; ".join(
            f"{d.tool} {d.path or '(input)'}: {_json(d.reference)} vs {_json(d.value)}"
            for d in item.argument_differences
        )
        rows.append(
            f"<tr><th scope='row'>{e(item.model)}</th><td>{e(item.reference)}</td>"
            f"<td{'' if item.same_trajectory else PARTED}>{e(where)}</td>"
            f"<td>{e(', '.join(item.only_this_model) or '—')}</td><td>{e(', '.join(item.missed) or '—')}</td>"
            f"<td>{e(differences or '—')}</td></tr>"
        )
    head = (
        "<tr><th scope='col'>Model</th><th scope='col'>Reference</th><th scope='col'>Typical trajectory</th>"
        "<th scope='col'>Only this model called</th><th scope='col'>Never called</th>"
        "<th scope='col'>Argument differences</th></tr>"
    )
    return "<h3>Against the reference model</h3>" + _table(
        f"Against the reference model, {report.scenario}", head, rows
    )


def first_divergence(runs: Sequence[RunReport]) -> int | None:
    """The first step (1-based, over the steps that called tools) where the runs' trajectories part,
    parallel calls in any order counting as the same step; None when every run took the same path."""
    if len(runs) < 2:
        return None
    paths = [[tuple(sorted(step)) for step in run.trajectory] for run in runs]
    for index in range(max(len(path) for path in paths)):
        at = {path[index] if index < len(path) else None for path in paths}
        if len(at) > 1:
            return index + 1
    return None


def _trajectories(scenario: str, runs: Sequence[RunReport]) -> str:
    if not runs:
        return "<p class='muted'>No runs.</p>"
    diverges = first_divergence(runs)
    depth = max(len(run.trajectory) for run in runs)
    head = (
        "<tr><th scope='col'>Step</th>"
        + "".join(
            f"<th scope='col'>{e(run.model)} #{run.repeat} "
            f"<span class='{_status_class(run.status)}'>{_MARKS[run.status]} {e(run.status)}</span></th>"
            for run in runs
        )
        + "</tr>"
    )
    rows = []
    for index in range(1, depth + 1):
        cells = "".join(f"<td>{e(_tools(_at(run, index)))}</td>" for run in runs)
        if index == diverges:
            rows.append(f"<tr class='diverge'><th scope='row'>{index} ◀ first divergence</th>{cells}</tr>")
        else:
            rows.append(f"<tr><th scope='row'>{index}</th>{cells}</tr>")
    final = "".join(f"<td>{e(_preview(run.final_text))}</td>" for run in runs)
    rows.append(f"<tr><th scope='row'>Final text</th>{final}</tr>")
    stops = "".join(f"<td>{e(run.stop_reason)}</td>" for run in runs)
    rows.append(f"<tr><th scope='row'>Stopped</th>{stops}</tr>")
    note = (
        f"<p>The runs part at step {diverges} (highlighted).</p>"
        if diverges is not None
        else "<p class='muted'>Every run took the same path through the tools.</p>"
        if len(runs) > 1
        else ""
    )
    return note + _table(f"Trajectories, {scenario}", head, rows)


def _at(run: RunReport, step: int) -> list[str] | None:
    """The run's tools at ``step`` (1-based), None once its trajectory has ended."""
    return run.trajectory[step - 1] if step <= len(run.trajectory) else None


def _status_class(status: str) -> str:
    return {"passed": "pass", "failed": "fail"}.get(status, "error")


def _run(run: RunReport) -> str:
    status = f"<span class='{e(_status_class(run.status))}'>{_MARKS[run.status]} {e(run.status)}</span>"
    facts = (
        f"{run.steps} model calls, ${run.cost_usd:.4f}"
        f"{f' + judge ${run.judge_cost_usd:.4f}' if run.judge_cost_usd else ''}, {_ms(run.total_latency_ms)}, "
        f"stopped: {run.stop_reason}"
    )
    parts = [f"<details><summary>{e(run.model)} #{run.repeat} {status} <span class='muted'>{e(facts)}</span></summary>"]
    for label, error in (("Error", run.error), ("Judge error", run.judge_error)):
        if error is not None:
            parts.append(
                f"<p class='error'>{label}: <code>{e(error.code)}</code> ({e(error.kind)}) {e(error.message)}</p>"
            )
    if run.assertions:
        items = "".join(_assertion(result) for result in run.assertions)
        parts.append(f"<ul class='assertions'>{items}</ul>")
    parts.extend(_step(step, [call for call in run.all_tool_calls if call.step == step.index]) for step in run.turns)
    parts.append("</details>")
    return "\n".join(parts)


def _assertion(result: Any) -> str:
    mark = "✓" if result.passed else "✗"
    css = "pass" if result.passed else ("muted" if result.soft else "fail")
    name = result.type + (f" “{result.label}”" if result.label else "") + (" (soft)" if result.soft else "")
    judged = " judge" if result.type == "judge" else ""
    return f"<li class='{css}{judged}'>{mark} <strong>{e(name)}</strong>: {e(result.message)}</li>"


def _step(step: StepRecord, calls: Iterable[ToolCallRecord]) -> str:
    cost = "no price" if step.cost_usd is None else f"${step.cost_usd:.4f}"
    head = (
        f"Step {step.index} · {step.answered_by or step.model} · {cost} · {_ms(step.latency_ms)}"
        f"{f' · {step.stop_reason}' if step.stop_reason else ''}"
    )
    body = [f"<h4>{e(head)}</h4>"]
    if step.text:
        body.append(f"<pre>{e(step.text)}</pre>")
    for call in calls:
        verdict = " (error)" if call.is_error else ""
        body.append(
            f"<p><code>{e(call.name)}</code>{e(verdict)} "
            f"<span class='muted'>{e(call.rule or call.problem or '')}</span></p>"
            f"<pre>{e(_json(call.input))}</pre><pre>{e(call.result)}</pre>"
        )
    for warning in step.warnings:
        body.append(f"<p class='error'>{e(warning)}</p>")
    return "\n".join(body)


def _coverage(report: Report) -> str:
    coverage = report.coverage
    lines = []
    if coverage.rules_never_hit:
        lines.append(f"<li>Rules no call reached: {e(', '.join(coverage.rules_never_hit))}</li>")
    for title, flagged in (
        ("Calls no rule answered", coverage.unmatched_calls),
        ("Calls to undeclared tools", coverage.unknown_tools),
        ("Calls with invalid arguments", coverage.invalid_calls),
    ):
        for call in flagged:
            lines.append(
                f"<li>{e(title)}: {e(call.model)} #{call.repeat} step {call.step} <code>{e(call.tool)}</code> "
                f"{e(_json(call.input))}</li>"
            )
    if not lines:
        return ""
    return f"<h3>Tool coverage</h3><ul>{''.join(lines)}</ul>"


def _tools(step: Sequence[str] | None) -> str:
    return "(ended)" if step is None else ", ".join(step) or "(no tool)"


def _preview(text: str) -> str:
    return text if len(text) <= TEXT_PREVIEW_CHARS else text[: TEXT_PREVIEW_CHARS - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
