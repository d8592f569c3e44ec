"""Simulated tools: every call the model makes gets an answer, and nothing a model sends crashes a run.

Before any rule, a call is checked: an unknown tool name, argument text that was not a JSON object,
and arguments failing the tool's ``input_schema`` are each answered with an ``is_error`` result
saying what was wrong (the model may correct itself), and recorded as the call's ``problem``.
Then the tool's rules are tried in order and the first whose ``when`` matches answers; else
``defaultResponse``; else an ``is_error`` "no simulated response for these arguments" (``unmatched``).

A ``then`` string is sent verbatim, anything else as compact JSON (never a JSON string of a JSON
string); ``error`` becomes an ``is_error`` result; ``sequence`` answers the k-th call that reaches
that rule with its k-th reply, the last one repeating. ``{{args.path}}`` in a string is replaced
by that argument. ``then: {image: path}`` answers with that image (read before the runs), as a tool
returning a screenshot does. Sequence positions belong to one run: every run starts at the first reply.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from colibri_router.testing.caller import ModelToolCall
from colibri_router.testing.context import image_path
from colibri_router.testing.matcher import compact_json, match, render_template
from colibri_router.testing.scenario import Reply, Response, ScenarioTool

Problem = Literal["unknown_tool", "unparseable_arguments", "invalid_arguments", "unmatched"]
NO_RESPONSE = "no simulated response for these arguments"
DEFAULT_RULE = "defaultResponse"


@dataclass(frozen=True, slots=True)
class SimulatedResult:
    """The answer to one call: the ``tool_result`` content, and which rule (or problem) produced it."""

    content: str
    is_error: bool = False
    rule: str | None = None
    sequence_index: int | None = None
    problem: Problem | None = None
    # Image blocks the result holds instead of text (``then: {image: path}``); ``content`` then names them.
    media: tuple[dict[str, Any], ...] = ()


def rule_id(tool: str, index: int | None) -> str:
    """``lookup_order.responses[0]``, or ``lookup_order.defaultResponse`` for ``index`` None."""
    return f"{tool}.{DEFAULT_RULE}" if index is None else f"{tool}.responses[{index}]"


class ToolSimulator:
    """The scenario's tools, compiled once (schema validators); :meth:`start` gives one run's state."""

    def __init__(self, tools: Sequence[ScenarioTool], images: Mapping[str, dict[str, Any]] | None = None) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self.images = dict(images or {})  # path → image block, read before the runs
        self._validators: dict[str, Validator] = {
            tool.name: validator_for(tool.input_schema)(tool.input_schema) for tool in tools
        }

    @property
    def rule_ids(self) -> list[str]:
        """Every rule of every tool, in declaration order (coverage lists the ones never hit)."""
        ids: list[str] = []
        for tool in self._tools.values():
            ids.extend(rule_id(tool.name, index) for index in range(len(tool.responses)))
            if tool.default_response is not None:
                ids.append(rule_id(tool.name, None))
        return ids

    def start(self) -> SimulatedRun:
        return SimulatedRun(self)

    def check(self, call: ModelToolCall) -> SimulatedResult | None:
        """The error answer for a call no rule may see (unknown tool, bad arguments), else None."""
        if call.name not in self._tools:
            known = ", ".join(self._tools) or "none"
            return _problem(f"unknown tool {call.name!r}; the available tools are: {known}", "unknown_tool")
        if call.parse_error is not None:
            return _problem(
                f"the arguments are not a valid JSON object ({call.parse_error}); send a JSON object "
                "that matches the tool's input schema",
                "unparseable_arguments",
            )
        error = best_match(self._validators[call.name].iter_errors(call.input))
        if error is not None:
            return _problem(
                f"the arguments do not match the tool's input schema at {error.json_path}: {error.message}",
                "invalid_arguments",
            )
        return None

    def tool(self, name: str) -> ScenarioTool:
        return self._tools[name]


class SimulatedRun:
    """One run's view of the simulation: it counts the calls each rule answered, for ``sequence``."""

    def __init__(self, simulator: ToolSimulator) -> None:
        self._simulator = simulator
        self._answered: Counter[str] = Counter()

    def answer(self, call: ModelToolCall) -> SimulatedResult:
        checked = self._simulator.check(call)
        if checked is not None:
            return checked
        tool = self._simulator.tool(call.name)
        for index, rule in enumerate(tool.responses):
            if match(rule.when, call.input):
                return self._reply(rule, rule_id(tool.name, index), call.input)
        if tool.default_response is not None:
            return self._reply(tool.default_response, rule_id(tool.name, None), call.input)
        return _problem(NO_RESPONSE, "unmatched")

    def _reply(self, response: Response, rule: str, args: dict[str, Any]) -> SimulatedResult:
        reply, sequence_index = response.reply(self._answered[rule])
        self._answered[rule] += 1
        path = image_path(reply.then) if "then" in reply.model_fields_set else None
        if path is not None:
            media = (self._simulator.images[path],)
            return SimulatedResult(f"[image {path}]", rule=rule, sequence_index=sequence_index, media=media)
        return SimulatedResult(
            content=render_reply(reply, args),
            is_error="error" in reply.model_fields_set,
            rule=rule,
            sequence_index=sequence_index,
        )


def render_reply(reply: Reply, args: dict[str, Any]) -> str:
    """The ``tool_result`` text: a string verbatim, any other value as compact JSON, templates filled."""
    value = reply.error if "error" in reply.model_fields_set else reply.then
    rendered = render_template(value, args)
    return rendered if isinstance(rendered, str) else compact_json(rendered)


def _problem(message: str, problem: Problem) -> SimulatedResult:
    return SimulatedResult(content=message, is_error=True, problem=problem)
