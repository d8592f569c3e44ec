"""The MCP tools, one entry each: the only place a tool's name is written. The handlers
(:mod:`.tools`), the argument models (:mod:`.arguments`), the published schemas
(:mod:`.generate_schemas`) and what ``serve --http`` loads before it listens (:mod:`.warm`) are all
read from :data:`TOOLS`. A new tool is one entry here and its service.

A service and its models are named by ``"module:attribute"`` and imported on the tool's first call,
not at start-up: some hosts stop waiting for a server that is slow to answer ``initialize``, and the
models, the router and its codecs are most of what a first call loads. A service is called as
``service(arguments, call)`` (:class:`colibri_router.callers.ToolCall`) and returns its result model.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from mcp.types import ToolAnnotations


@dataclass(frozen=True)
class ToolEntry:
    name: str
    title: str
    description: str
    annotations: ToolAnnotations
    service: str  # "module:function": ``async (arguments, call) -> result``
    arguments: str  # "module:Class": its input model
    result: str  # "module:Class": its success object's model (a failure is the error object)
    # Its input's ``provider`` limited to the registry's names when the server starts.
    provider_enum: bool = False
    # How many levels of its result the output schema describes (None: all of it).
    result_levels: int | None = None
    # Its result leaves out the fields it lacks instead of answering them null.
    sparse: bool = False
    # A long tool: it takes ``background`` and may answer a job handle (colibri_router.jobs).
    background: bool = False
    # Its success objects' descriptions in its output schema (False: another tool's schema has them).
    result_descriptions: bool = True

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules its first call imports."""
        return tuple(path.partition(":")[0] for path in (self.service, self.arguments, self.result))


def load(path: str) -> Any:
    """The attribute ``"module:attribute"`` names, its module imported if it was not yet."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


# What the tools do to the world: none changes the user's machine except router_threads' delete, and
# the ones that ask models talk to services outside it.
_ASKS_MODELS = ToolAnnotations(read_only_hint=True, open_world_hint=True, destructive_hint=False, idempotent_hint=False)

TOOLS: tuple[ToolEntry, ...] = (
    ToolEntry(
        name="router_call",
        title="Route to another model",
        description="""\
Send a prompt, or a whole conversation with optional tool definitions, to another model: Kimi, \
Claude, GPT, Gemini, Mistral and more, or a command-line agent on the user's own login (claude-code, \
codex, gemini-cli: it reads the project itself, read-only). Returns the answer normalized: content, \
tool_calls, thinking, model, token usage, cost, latency and stop reason. `message` is the assistant turn to append to \
`messages` before the next call; it is null when the model called no tools, and then the turn to \
append is {"role": "assistant", "content": <content>}. Tool loops can switch provider at any turn; \
tool-call IDs are provider-neutral. To show the model files, images or PDFs on disk, pass their paths \
in `files` rather than pasting their content.\
""",
        annotations=_ASKS_MODELS,
        service="colibri_router.call.service:for_tool",
        arguments="colibri_router.schema:RouterCallInput",
        result="colibri_router.schema:RouterCallResult",
        provider_enum=True,
        background=True,
    ),
    ToolEntry(
        name="router_ask_many",
        title="Ask several models at once",
        description="Ask 2-8 models the same thing in parallel (router_call's input, `models` instead of "
        "`model`): every answer in order, or its error. With `judge`: a verdict on the anonymised answers "
        "(synthesis, agreement 0-1). One deadline for all; max_cost_usd and budgets count every model "
        "and the judge.",
        annotations=_ASKS_MODELS,
        service="colibri_router.ask_many.service:for_tool",
        arguments="colibri_router.ask_many.schema:RouterAskManyInput",
        result="colibri_router.ask_many.schema:RouterAskManyResult",
        sparse=True,
        background=True,
    ),
    ToolEntry(
        name="router_models",
        title="List providers and models",
        description="List each provider (whether its key is set, its default model) and the model names and "
        "aliases router_call accepts. live: also ask each configured provider's model list.",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True, destructive_hint=False),
        service="colibri_router.catalog.service:for_tool",
        arguments="colibri_router.catalog.schema:RouterModelsInput",
        result="colibri_router.catalog.schema:RouterModelsResult",
    ),
    ToolEntry(
        name="router_threads",
        title="Stored conversation threads",
        description="List your stored router_call threads (newest first), get one's messages, or delete one.",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
        service="colibri_router.history.service:threads_for_tool",
        arguments="colibri_router.history.schema:RouterThreadsInput",
        result="colibri_router.history.schema:RouterThreadsResult",
        sparse=True,
    ),
    ToolEntry(
        name="router_usage",
        title="What router_call spent",
        description="Totals of your router_call usage (calls, errors, tokens, cost in USD) since "
        "today/7d/30d/all, optionally grouped by provider, model or day.",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False, destructive_hint=False),
        service="colibri_router.history.service:usage_for_tool",
        arguments="colibri_router.history.schema:RouterUsageInput",
        result="colibri_router.history.schema:RouterUsageResult",
    ),
    ToolEntry(
        name="router_run",
        title="Test an agent scenario on models",
        description="Run an agent-testing scenario (scripted user turns, simulated tools, expectations) on "
        "each of its models; report pass rates, cost and where trajectories differ. Spends money.",
        annotations=ToolAnnotations(
            read_only_hint=False, open_world_hint=True, destructive_hint=False, idempotent_hint=False
        ),
        service="colibri_router.testing.service:for_tool",
        arguments="colibri_router.testing.tool_input:RouterRunInput",
        result="colibri_router.testing.report:Report",
        # The whole report (every run's turns, assertions, comparisons) would be 9,000 characters of
        # tools/list: its top level is described, the rest in docs/agent-testing.md.
        result_levels=1,
        background=True,
    ),
    ToolEntry(
        name="router_job",
        title="A long call's job",
        description="Wait for a job that router_call, router_ask_many or router_run handed off: its result "
        "once it ends (exactly the call's), else its progress. cancel: stop it. No job_id: your recent jobs.",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
        ),
        service="colibri_router.jobs.follow:for_tool",
        arguments="colibri_router.jobs.model:RouterJobInput",
        result="colibri_router.jobs.results:JobResult",
        # A finished job's result is its own tool's: its top level's types here, the rest in that tool's schema.
        result_levels=1,
        result_descriptions=False,
    ),
)
BY_NAME = {entry.name: entry for entry in TOOLS}
