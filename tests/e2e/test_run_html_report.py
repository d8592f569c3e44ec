"""``colibri-router run --format html --out report.html`` as a user runs it: a run recorded against the
loopback fake upstream, then replayed with no network into the JSON report and the HTML page in one
command; the page is well-formed, loads nothing, and shows the JSON's figures for each model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_upstream import FakeUpstream
from harness import host_env
from test_cli_commands import cli, scenario_file, script_runs

pytestmark = pytest.mark.e2e


def test_a_recorded_run_replays_into_a_self_contained_page(fake_upstream: FakeUpstream, tmp_path: Path) -> None:
    from html.parser import HTMLParser

    env = host_env(fake_upstream)
    script_runs(fake_upstream, 2)
    recording = tmp_path / "calls.jsonl"
    recorded = cli(env, "run", str(scenario_file(tmp_path)), "--record", str(recording), "--concurrency", "1")
    assert recorded.returncode == 0, recorded.stderr

    offline = {**env, "COLIBRI_KIMI_BASE_URL": "http://127.0.0.1:9/nothing-here"}
    report_json, report_html = tmp_path / "report.json", tmp_path / "report.html"
    replayed = cli(
        offline,
        "run",
        str(scenario_file(tmp_path)),
        "--replay",
        str(recording),
        "--concurrency",
        "1",
        "--format",
        "json",
        "--out",
        str(report_json),
        "--format",
        "html",
        "--out",
        str(report_html),
    )
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == ""  # both reports went to their files

    page = report_html.read_text(encoding="utf-8")
    cells: list[str] = []
    tags: list[tuple[str, dict[str, str | None]]] = []

    class Reader(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append((tag, dict(attrs)))

        def handle_data(self, data: str) -> None:
            if data.strip():
                cells.append(data.strip())

    Reader().feed(page)
    assert not {"script", "link", "img", "iframe"} & {tag for tag, _ in tags}
    assert not re.search(r"(?i)(src|href)\s*=\s*['\"]?(https?:|//)", page)
    assert "https://" not in page and "http://" not in page

    (report,) = json.loads(report_json.read_text())
    (model,) = report["models"]
    assert model["model"] in cells
    assert f"{model['passed']}/{model['runs']}" in cells
    assert f"${model['cost_usd']:.4f}" in cells
    for value in model["pass_at_k"].values():
        assert f"{value:.2f}" in cells
    assert f"{model['latency_ms']['p50']:,} ms" in cells
