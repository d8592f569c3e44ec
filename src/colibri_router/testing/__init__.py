"""Agent testing: run one scenario with simulated tools on every model, score it, compare trajectories.

The model call is injected: :func:`run_scenario` and :func:`run_conversation` take a ``caller``
(:class:`ModelCaller`) that answers a :class:`ModelCall` with a :class:`ModelStep` or raises
:class:`ModelCallError`. The router is the real caller; :class:`Replayer` answers from a recording.

Modules, by idea: ``scenario`` (the model and loading), ``expectations`` (the assertion types),
``matcher`` (patterns), ``simulate`` (tool answers), ``loop`` (one run), ``runner`` (all runs),
``assertions`` and ``judge`` (scoring), ``trajectory`` and ``compare`` (paths through the tools),
``report``, ``render`` (table, JUnit), ``html_report`` (the report as one page), ``record``
(record/replay), ``dialogue`` (``run_conversation``).
"""

from colibri_router.testing.assertions import AssertionResult
from colibri_router.testing.caller import (
    CallOrigin,
    ModelCall,
    ModelCaller,
    ModelCallError,
    ModelStep,
    ModelToolCall,
    Repair,
)
from colibri_router.testing.dialogue import run_conversation
from colibri_router.testing.html_report import render_html
from colibri_router.testing.matcher import match
from colibri_router.testing.record import Recorder, RecordingError, Replayer
from colibri_router.testing.render import render_junit, render_pretty
from colibri_router.testing.report import ExitCode, ModelReport, Report, RunReport, exit_code
from colibri_router.testing.router_caller import RouterCaller
from colibri_router.testing.runner import (
    CONCURRENCY_VARIABLE,
    ProgressCallback,
    RunProgress,
    run_concurrency,
    run_scenario,
)
from colibri_router.testing.scenario import (
    InvalidInput,
    Scenario,
    ScenarioError,
    ScenarioSource,
    load_scenario,
    parse_scenario,
    with_overrides,
)
from colibri_router.testing.transcript import ConversationResult

__all__ = [
    "CONCURRENCY_VARIABLE",
    "AssertionResult",
    "CallOrigin",
    "ConversationResult",
    "ExitCode",
    "InvalidInput",
    "ModelCall",
    "ModelCallError",
    "ModelCaller",
    "ModelReport",
    "ModelStep",
    "ModelToolCall",
    "ProgressCallback",
    "Recorder",
    "RecordingError",
    "Repair",
    "Replayer",
    "Report",
    "RouterCaller",
    "RunProgress",
    "RunReport",
    "Scenario",
    "ScenarioError",
    "ScenarioSource",
    "exit_code",
    "load_scenario",
    "match",
    "parse_scenario",
    "render_html",
    "render_junit",
    "render_pretty",
    "run_concurrency",
    "run_conversation",
    "run_scenario",
    "with_overrides",
]
