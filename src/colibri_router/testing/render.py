"""Reports for people and for CI: a pretty table, and JUnit XML.

Pretty: one row per scenario, one column per model, each cell ``passed/runs mark $cost``
(``2/3 ✗ $0.004``; ✓ pass, ✗ fail, ⚠ error), then every failing assertion and run error.
JUnit: one ``testsuite`` per scenario, one ``testcase`` per model, with a ``failure`` when that
model's verdict is ``fail`` and an ``error`` when it is ``error``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from colibri_router.testing.report import ModelReport, Report, RunReport

MARKS = {"pass": "✓", "fail": "✗", "error": "⚠"}
EMPTY_CELL = "—"


def cell(model: ModelReport) -> str:
    return f"{model.passed}/{model.runs} {MARKS[model.verdict]} ${model.cost_usd + model.judge_cost_usd:.3f}"


def render_pretty(reports: Sequence[Report]) -> str:
    columns = list(dict.fromkeys(model.model for report in reports for model in report.models))
    header = ["scenario", *columns]
    rows = [header]
    for report in reports:
        cells = {model.model: cell(model) for model in report.models}
        rows.append([report.scenario, *(cells.get(column, EMPTY_CELL) for column in columns)])
    widths = [max(len(row[index]) for row in rows) for index in range(len(header))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    problems = list(_problems(reports))
    if problems:
        lines += ["", "failing:", *(f"  {problem}" for problem in problems)]
    return "\n".join(lines) + "\n"


def _problems(reports: Sequence[Report]) -> list[str]:
    found: list[str] = []
    for report in reports:
        for model in report.models:
            for run in model.results:
                where = f"{report.scenario} · {model.model} · repeat {run.repeat}"
                trouble = run_trouble(run)
                if trouble is not None:
                    found.append(f"{where} · {trouble}")
                found.extend(
                    f"{where} · {result.type}{f' {result.label!r}' if result.label else ''}: {result.message}"
                    for result in run.assertions
                    if not result.passed and not result.soft
                )
    return found


def render_junit(reports: Sequence[Report]) -> str:
    """JUnit XML for CI: a model's testcase fails when its verdict fails, errors when it errors."""
    root = ET.Element("testsuites", name="colibri-router")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for report in reports:
        suite = ET.SubElement(root, "testsuite", name=report.scenario)
        counts = {"tests": len(report.models), "failures": 0, "errors": 0}
        for model in report.models:
            case = ET.SubElement(suite, "testcase", classname=report.scenario, name=model.model, time=_seconds(model))
            summary = (
                f"{model.passed}/{model.runs} runs passed, {model.errors} errored "
                f"(min pass rate {report.min_pass_rate:g})"
            )
            if model.verdict == "fail":
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", message=summary, type="fail")
                failure.text = _details(model)
            elif model.verdict == "error":
                counts["errors"] += 1
                error = ET.SubElement(case, "error", message=summary, type="error")
                error.text = _details(model)
        for name, value in counts.items():
            suite.set(name, str(value))
            totals[name] += value
        suite.set("time", f"{sum(float(_seconds(model)) for model in report.models):.3f}")
    for name, value in totals.items():
        root.set(name, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _seconds(model: ModelReport) -> str:
    return f"{sum(run.total_latency_ms for run in model.results) / 1000:.3f}"


def _details(model: ModelReport) -> str:
    lines = [f"repeat {failure.repeat} · {failure.assertion}: {failure.message}" for failure in model.failures]
    for run in model.results:
        trouble = run_trouble(run)
        if trouble is not None:
            lines.append(f"repeat {run.repeat} · {trouble}")
    return "\n".join(lines)


def run_trouble(run: RunReport) -> str | None:
    """Why a run errored (a provider or judge error, or what stopped it early), or None."""
    error = run.error or run.judge_error
    if error is not None:
        return f"error {error.code} ({error.kind}): {error.message}"
    if run.status == "error":
        return f"stopped: {run.stop_reason}"
    return None
