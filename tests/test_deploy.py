"""The monitoring files in deploy/ parse, match docs/team-server.md, and use only metrics the server exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from docs_pages import code_blocks, page
from prometheus_client.parser import text_string_to_metric_families

from colibri_router.observability.metrics import Metrics

DEPLOY = Path(__file__).parents[1] / "deploy"


def exported_names() -> set[str]:
    """Every sample name the server's /metrics can hold (histograms' _bucket, _sum, _count too)."""
    metrics = Metrics()
    names = set()
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        kind = family.type
        names.add(family.name)
        if kind == "counter":
            names.add(f"{family.name}_total")
        if kind == "histogram":
            names.update(f"{family.name}{suffix}" for suffix in ("_bucket", "_sum", "_count"))
    return names


def test_the_scrape_config_parses_and_is_the_readmes() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    [job] = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    assert job["authorization"]["type"] == "Bearer"
    assert all(re.fullmatch(r"[\w.-]+:\d+", target) for target in job["static_configs"][0]["targets"])
    [readme_block] = [block for block in code_blocks(page("team-server.md"), "yaml") if "scrape_configs" in block]
    assert yaml.safe_load(readme_block) == config


def test_the_dashboard_parses_and_queries_only_exported_metrics() -> None:
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert exprs and dashboard["title"] == "colibri-router"
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    used = {name for expr in exprs for name in re.findall(r"colibri_router_\w+", expr)}
    exported = exported_names()
    assert used <= exported, used - exported
    documented = page("team-server.md")
    families = {name for name in exported if not name.endswith(("_bucket", "_sum", "_count", "_created"))}
    families = {name for name in families if f"{name}_total" not in families}
    assert all(f"`{name}`" in documented for name in families), [n for n in families if f"`{n}`" not in documented]
