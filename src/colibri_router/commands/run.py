"""``colibri-router run SCENARIO.yaml...``: agent-testing scenarios on their models, with a report per
format, record/replay, and exit codes CI can branch on (0 all passed, 1 a scenario failed, 2 invalid
input and nothing run, 3 runs errored without any failed assertion)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from colibri_router.commands.jobs import background
from colibri_router.errors import ConfigError

FORMATS = ("pretty", "json", "junit", "html")


def register(commands: Any, provider_names: list[str]) -> None:
    run = commands.add_parser(
        "run",
        help="run agent-testing scenarios on their models",
        description="Run scenarios (YAML or JSON) on each of their models and report.",
    )
    run.add_argument("scenarios", nargs="*", type=Path, metavar="SCENARIO")
    run.add_argument("--model", dest="models", action="append", help="replace the scenarios' models (repeatable)")
    run.add_argument("--repeat", type=int, help="runs per model")
    run.add_argument("--max-steps", type=int, help="model calls per run (at most 50)")
    run.add_argument("--concurrency", type=int, help="runs at once (default COLIBRI_RUN_CONCURRENCY, 4)")
    run.add_argument("--max-cost", dest="max_cost_usd", type=float, help="stop starting runs past this spend (USD)")
    run.add_argument(
        "--format",
        dest="formats",
        action="append",
        choices=FORMATS,
        help="pretty (default), json, junit, html (one self-contained page)",
    )
    run.add_argument("--out", dest="outs", action="append", type=Path, help="file for the matching --format")
    replay = run.add_mutually_exclusive_group()
    replay.add_argument("--record", type=Path, help="append every model call to this JSONL file")
    replay.add_argument("--replay", type=Path, help="answer model calls from this recording (no network)")
    run.add_argument("--dry-run", action="store_true", help="validate the scenarios and print the plan")
    run.add_argument("--schema", action="store_true", help="print the scenario JSON schema")
    run.add_argument(
        "--background", action="store_true", help="run one scenario detached as a router_run job; print its handle"
    )


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    import anyio

    # The agent-testing runner loads when the command runs, not with every CLI start (the server's).
    from colibri_router import testing

    if args.schema:
        stdout.write(json.dumps(testing.Scenario.model_json_schema(by_alias=True), indent=2) + "\n")
        return 0
    if not args.scenarios:
        sys.stderr.write("colibri-router run: give at least one scenario file\n")
        return testing.ExitCode.INVALID_INPUT
    try:
        plans = [
            testing.with_overrides(
                testing.load_scenario(path), models=args.models, repeat=args.repeat, max_steps=args.max_steps
            )
            for path in args.scenarios
        ]
        caller: Any = testing.Replayer.load(args.replay) if args.replay else testing.RouterCaller()
        if args.record:
            caller = testing.Recorder(caller, args.record)
    except (testing.InvalidInput, ConfigError) as error:
        sys.stderr.write(f"colibri-router run: {error}\n")
        return testing.ExitCode.INVALID_INPUT
    if args.background:
        return _background(args, stdout)
    if args.dry_run:
        for plan in plans:
            stdout.write(f"{plan.name}: {', '.join(plan.models)} x {plan.repeat} (max {plan.max_steps} steps)\n")
        return 0
    progress = _Progress(sys.stderr)

    async def run_all() -> list[Any]:
        return [
            await testing.run_scenario(
                plan,
                caller=caller,
                max_cost_usd=args.max_cost_usd,
                concurrency=args.concurrency,
                on_progress=progress.update,
            )
            for plan in plans
        ]

    try:
        reports = anyio.run(run_all)
    except (testing.InvalidInput, ConfigError) as error:
        sys.stderr.write(f"colibri-router run: {error}\n")
        return testing.ExitCode.INVALID_INPUT
    progress.done()
    renderers: dict[str, Callable[[list[Any]], str]] = {
        "pretty": testing.render_pretty,
        "junit": testing.render_junit,
        "html": testing.render_html,
    }
    _write_reports(reports, args.formats or ["pretty"], args.outs or [], stdout, renderers)
    return testing.exit_code(reports)


def _write_reports(
    reports: list[Any],
    formats: list[str],
    outs: list[Path],
    stdout: TextIO,
    renderers: dict[str, Callable[[list[Any]], str]],
) -> None:
    """Each format's report (``renderers``: the agent-testing runner's, by format; json here)."""
    for index, kind in enumerate(formats):
        render = renderers.get(kind)
        if render is not None:
            text = render(reports)
        else:
            text = json.dumps([report.to_json("full") for report in reports], indent=2, ensure_ascii=False)
        if index < len(outs):
            outs[index].write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        else:
            stdout.write(text if text.endswith("\n") else text + "\n")


class _Progress:
    """One line per finished run on stderr; on a terminal, one line rewritten in place."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()

    async def update(self, progress: Any) -> None:
        width = 20
        filled = round(width * progress.done / max(progress.total, 1))
        if self._tty:
            bar = "#" * filled + "-" * (width - filled)
            self._stream.write(f"\r[{bar}] {progress.message}\x1b[K")
        else:
            self._stream.write(progress.message + "\n")
        self._stream.flush()

    def done(self) -> None:
        if self._tty:
            self._stream.write("\n")
            self._stream.flush()


def _background(args: argparse.Namespace, stdout: TextIO) -> int:
    """``--background``: one scenario as router_run's input, run detached (:mod:`colibri_router.jobs`)."""
    # router_run's input model loads when the command runs, not with every CLI start (the server's).
    from colibri_router.testing.tool_input import RouterRunInput

    if len(args.scenarios) != 1 or args.record or args.replay or args.dry_run or args.formats or args.outs:
        sys.stderr.write(
            "colibri-router run: --background takes one scenario, without --record, --replay, "
            "--dry-run, --format or --out (the job's result is router_run's report)\n"
        )
        return 2
    given = {
        "models": args.models,
        "repeat": args.repeat,
        "max_steps": args.max_steps,
        "max_cost_usd": args.max_cost_usd,
    }
    fields = {"scenario_path": str(args.scenarios[0].absolute())} | {k: v for k, v in given.items() if v is not None}
    arguments = RouterRunInput.model_validate(fields)
    return background("router_run", arguments, stdout)
