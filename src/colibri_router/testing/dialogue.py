"""``run_conversation``: one model, one request, simulated tools, on the same loop as scenarios
(docs/agent-testing.md).

``run_conversation(model, request, tool_simulations, max_turns=10, caller=...)`` runs one model on one request
(``{system?, messages, tools?, params?}``: messages in Anthropic shape ending with a user turn, tools in
Anthropic shape), answers its tool calls from ``tool_simulations`` (``{name, responses: [{when, then | error |
sequence}], defaultResponse?}``) and returns the conversation: ``turns``, ``final_text``, ``all_tool_calls``,
``total_usage``, ``total_latency_ms``, plus why it stopped. The calls stay in the assistant turn, every call
of a step is answered in one user turn, a string ``then`` is not JSON-encoded again, and bad arguments are
answered, not fatal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from colibri_router.testing.caller import ModelCaller
from colibri_router.testing.loop import RunPlan, RunState, Spending, play
from colibri_router.testing.router_caller import RouterCaller  # the router: only when it is used
from colibri_router.testing.scenario import InvalidInput, Scenario, ToolSimulation, validate_scenario
from colibri_router.testing.simulate import ToolSimulator
from colibri_router.testing.transcript import ConversationResult

REQUEST_FIELDS = frozenset({"system", "messages", "tools", "params"})
CONVERSATION_NAME = "run_conversation"


async def run_conversation(
    model: str,
    request: Mapping[str, Any],
    tool_simulations: Sequence[ToolSimulation | Mapping[str, Any]],
    max_turns: int = 10,
    *,
    caller: ModelCaller | None = None,
) -> ConversationResult:
    """Run ``model`` on ``request`` until it answers without tool calls or makes ``max_turns`` calls;
    ``caller`` is the router unless given."""
    if caller is None:
        caller = RouterCaller()
    scenario = conversation_scenario(model, request, tool_simulations, max_turns)
    state = RunState()
    simulation = ToolSimulator(scenario.tools).start()
    await play(RunPlan.of(scenario, model, 1), state, caller=caller, tools=simulation, spending=Spending())
    return state.result()


def conversation_scenario(
    model: str,
    request: Mapping[str, Any],
    tool_simulations: Sequence[ToolSimulation | Mapping[str, Any]],
    max_turns: int,
) -> Scenario:
    """The one-run scenario a ``run_conversation`` call describes, validated like any scenario."""
    unknown = set(request) - REQUEST_FIELDS
    if unknown:
        raise InvalidInput(f"request fields {sorted(unknown)} are unknown (known: {sorted(REQUEST_FIELDS)})")
    simulations = {
        simulation.name: simulation
        for simulation in (
            item if isinstance(item, ToolSimulation) else ToolSimulation.model_validate(item)
            for item in tool_simulations
        )
    }
    tools = [dict(tool) for tool in request.get("tools", [])]
    declared = {tool.get("name") for tool in tools}
    undeclared = sorted(name for name in simulations if name not in declared)
    if undeclared:
        raise InvalidInput(f"tool_simulations name tools the request does not declare: {undeclared}")
    for tool in tools:
        simulation = simulations.get(tool.get("name", ""))
        if simulation is not None:
            tool.update(simulation.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude={"name"}))
    document = {
        "colibri": 1,
        "name": CONVERSATION_NAME,
        "models": [model],
        "max_steps": max_turns,
        **{key: value for key, value in request.items() if key != "tools"},
        "tools": tools,
    }
    return validate_scenario(document, CONVERSATION_NAME)
