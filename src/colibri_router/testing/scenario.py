"""The scenario: one pydantic model, read from YAML or JSON, the same for the CLI and the MCP tool.

Shape errors and reference errors (a tool named in ``expect`` that the scenario does not declare, a
``turn`` label no turn carries, an invalid pattern or ``input_schema``, a ``params`` key
``router_call`` would refuse) are all reported at load, each under its field path, as one
:class:`ScenarioError`; nothing runs on an invalid scenario.
"""

from __future__ import annotations

import json
import os
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import yaml
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from colibri_router.schema import InputMessage, RouterCallInput
from colibri_router.testing.expectations import (
    ASSERTION_TYPES,
    Assertion,
    Judge,
    patterns_of,
    tools_named,
)
from colibri_router.testing.matcher import pattern_problems

MAX_STEPS_CAP = 50
# router_call options the scenario gives elsewhere (conversation, tools, system, models).
_PARAMS_GIVEN_ELSEWHERE = ("prompt", "messages", "tools", "system_prompt", "model", "provider")

ModelSpec = Annotated[str, StringConstraints(min_length=1, pattern=r"^\S+$")]


class InvalidInput(ValueError):
    """Input the runner refuses before running anything (the CLI's exit code 2)."""


class ScenarioError(InvalidInput):
    """An invalid scenario: ``problems`` holds (field path, message) pairs, in document order."""

    def __init__(self, problems: list[tuple[str, str]], source: str | None = None) -> None:
        self.problems = problems
        self.source = source
        where = f" {source}" if source else ""
        lines = "\n".join(f"  {path or '(scenario)'}: {message}" for path, message in problems)
        super().__init__(f"invalid scenario{where}:\n{lines}")


_REPLY_KINDS = frozenset({"then", "error", "sequence"})
_ONE_REPLY = "give exactly one of `then`, `error` or `sequence` (a plain value is written {then: VALUE})"


class Reply(BaseModel):
    """What a simulated tool answers: exactly one of ``then`` (the result) or ``error`` (an is_error result)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    then: Any = None
    error: Any = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Reply:
        given = self.model_fields_set & {"then", "error"}
        if len(given) != 1:
            raise ValueError("give exactly one of `then` or `error`")
        return self


class Response(BaseModel):
    """A reply, or a ``sequence`` of replies for the 1st, 2nd... call (the last one repeats)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    then: Any = None
    error: Any = None
    sequence: list[Reply] | None = Field(default=None, min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _not_a_plain_value(cls, data: Any) -> Any:
        # A plain-value defaultResponse is a common mistake: say how to write one rather than list its keys.
        if not isinstance(data, Mapping) or not data.keys() & _REPLY_KINDS:
            raise ValueError(_ONE_REPLY)
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> Response:
        if len(self.model_fields_set & _REPLY_KINDS) != 1:
            raise ValueError(_ONE_REPLY)
        return self

    def reply(self, occurrence: int) -> tuple[Reply, int | None]:
        """The reply to the ``occurrence``-th (0-based) call this response answers, and its sequence index."""
        if self.sequence is None:
            reply = Reply(error=self.error) if "error" in self.model_fields_set else Reply(then=self.then)
            return reply, None
        index = min(occurrence, len(self.sequence) - 1)
        return self.sequence[index], index


class ResponseRule(Response):
    when: dict[str, Any] = Field(description="A pattern the call's arguments must match (see the matcher).")


class ToolSimulation(BaseModel):
    """How one tool answers, in ``run_conversation``'s terms: rules tried in order, then ``defaultResponse``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=128)
    responses: list[ResponseRule] = Field(default_factory=list)
    default_response: Response | None = Field(default=None, alias="defaultResponse")


class ScenarioTool(ToolSimulation):
    """A tool the model may call: its Anthropic-shape definition and its simulation."""

    description: str | None = None
    input_schema: dict[str, Any]

    def definition(self) -> dict[str, Any]:
        """The definition the model sees (without the simulation)."""
        definition: dict[str, Any] = {"name": self.name, "input_schema": self.input_schema}
        if self.description is not None:
            definition["description"] = self.description
        return definition


class Turn(BaseModel):
    """A scripted user turn; ``model`` switches the run to that model from this turn on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str | None = Field(default=None, min_length=1)
    user: str = Field(min_length=1)
    model: ModelSpec | None = None
    files: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None, min_length=1, max_length=64, description="Read into this turn, as router_call's `files`."
    )


class PassCriteria(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min_pass_rate: float = Field(default=1.0, ge=0, le=1, description="Share of scored runs that must pass, per model.")


class Scenario(BaseModel):
    """One agent test: a conversation script, simulated tools, expectations, run on every model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    colibri: Literal[1] = Field(description="Format version.")
    name: str = Field(min_length=1)
    models: list[ModelSpec] = Field(min_length=1, description="Aliases or `<provider>:<model>`.")
    repeat: int = Field(default=1, ge=1, description="Runs per model.")
    max_steps: int = Field(default=10, ge=1, le=MAX_STEPS_CAP, description="Model calls per run.")
    params: dict[str, Any] = Field(default_factory=dict, description="router_call options but the conversation.")
    system: str | None = None
    messages: list[InputMessage] = Field(default_factory=list, description="Prior conversation, Anthropic shape.")
    prompt: str | None = Field(default=None, min_length=1, description="Shorthand for one scripted turn.")
    turns: list[Turn] = Field(default_factory=list)
    tools: list[ScenarioTool] = Field(default_factory=list)
    expect: list[Assertion] = Field(default_factory=list)
    pass_criteria: PassCriteria = Field(default_factory=PassCriteria, alias="pass")
    allow_truncation: bool = Field(default=False, description="Whether a run reaching max_steps may still pass.")

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        problems = [
            *self._script_problems(),
            *self._tool_problems(),
            *self._expect_problems(),
            *self._params_problems(),
        ]
        if problems:
            summary = "; ".join(f"{path}: {message}" for path, message in problems)
            raise PydanticCustomError("scenario_references", "{summary}", {"summary": summary, "problems": problems})
        return self

    @property
    def script(self) -> list[Turn]:
        """The scripted user turns, ``prompt`` included."""
        return [Turn(user=self.prompt)] if self.prompt is not None else list(self.turns)

    def prior_messages(self) -> list[dict[str, Any]]:
        return [message.model_dump(mode="json", exclude_none=True) for message in self.messages]

    def tool(self, name: str) -> ScenarioTool | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def model_names(self) -> list[tuple[str, str]]:
        """Every model name the scenario asks, with its field path: ``models``, a turn's switch, a judge."""
        named = [(f"models[{index}]", model) for index, model in enumerate(self.models)]
        named.extend((f"turns[{index}].model", turn.model) for index, turn in enumerate(self.turns) if turn.model)
        named.extend(
            (f"expect[{index}].model", assertion.model)
            for index, assertion in enumerate(self.expect)
            if isinstance(assertion, Judge)
        )
        return named

    def _script_problems(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if self.prompt is not None and self.turns:
            problems.append(("prompt", "give `prompt` or `turns`, not both"))
        ends_with_user = bool(self.messages) and self.messages[-1].role == "user"
        if self.prompt is None and not self.turns and not ends_with_user:
            problems.append(("turns", "give `prompt` or `turns` (or `messages` ending with a user turn)"))
        problems.extend(_duplicates("models", self.models, "model"))
        labels = [turn.label for turn in self.turns if turn.label is not None]
        problems.extend(_duplicates("turns", labels, "label"))
        return problems

    def _tool_problems(self) -> list[tuple[str, str]]:
        problems = _duplicates("tools", [tool.name for tool in self.tools], "tool name")
        for index, tool in enumerate(self.tools):
            try:
                validator_for(tool.input_schema).check_schema(tool.input_schema)
            except SchemaError as error:
                problems.append((f"tools[{index}].input_schema", f"not a valid JSON Schema: {error.message}"))
            for rule_index, rule in enumerate(tool.responses):
                base = f"tools[{index}].responses[{rule_index}].when"
                problems.extend(_located(base, problem) for problem in pattern_problems(rule.when))
        return problems

    def _expect_problems(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        declared = {tool.name for tool in self.tools}
        labels = {turn.label for turn in self.turns if turn.label is not None}
        for index, assertion in enumerate(self.expect):
            base = f"expect[{index}]"
            for name in tools_named(assertion):
                if name not in declared:
                    known = ", ".join(sorted(declared)) or "none"
                    problems.append((base, f"tool {name!r} is not declared in `tools` (declared: {known})"))
            if assertion.turn is not None and assertion.turn not in labels:
                problems.append((f"{base}.turn", f"no scripted turn is labelled {assertion.turn!r}"))
            for field, pattern in patterns_of(assertion):
                problems.extend(_located(f"{base}.{field}", problem) for problem in pattern_problems(pattern))
        return problems

    def _params_problems(self) -> list[tuple[str, str]]:
        problems = [
            (f"params.{key}", "given by the scenario itself (messages, prompt, tools, system, models), not params")
            for key in self.params
            if key in _PARAMS_GIVEN_ELSEWHERE
        ]
        choice = self.params.get("tool_choice")
        if isinstance(choice, Mapping) and choice.get("name") not in {tool.name for tool in self.tools}:
            problems.append(("params.tool_choice.name", f"tool {choice.get('name')!r} is not declared in `tools`"))
        if problems:
            return problems
        try:
            # router_call's own input model decides which options exist and what values they take.
            RouterCallInput.model_validate({**self.params, "prompt": "-"})
        except ValidationError as error:
            problems.extend(("params." + _loc_path(problem["loc"]), problem["msg"]) for problem in error.errors())
        return problems


def _duplicates(path: str, values: list[str], what: str) -> list[tuple[str, str]]:
    seen: set[str] = set()
    problems: list[tuple[str, str]] = []
    for index, value in enumerate(values):
        if value in seen:
            problems.append((f"{path}[{index}]", f"duplicate {what} {value!r}"))
        seen.add(value)
    return problems


def _located(base: str, problem: tuple[str, str]) -> tuple[str, str]:
    """A pattern problem under the pattern's own field path."""
    place, message = problem
    if not place:
        return base, message
    return (f"{base}{place}" if place.startswith("[") else f"{base}.{place}"), message


ScenarioSource: TypeAlias = Scenario | Mapping[str, Any] | str | os.PathLike[str]
"""A scenario, its fields as a mapping, or the path of a YAML or JSON file (a ``str`` is a path)."""


def load_scenario(source: ScenarioSource) -> Scenario:
    """A scenario from a model, a mapping, or a YAML/JSON file path; raises :class:`ScenarioError`."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        return validate_scenario(source)
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ScenarioError([("", f"cannot read the file: {error.strerror or error}")], str(path)) from error
    if path.suffix.lower() == ".json":
        return validate_scenario(_json_document(text, str(path)), str(path))
    return parse_scenario(text, source=str(path))


def parse_scenario(text: str, *, source: str | None = None) -> Scenario:
    """A scenario from YAML (or JSON, which YAML reads too) text; raises :class:`ScenarioError`."""
    try:
        document = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as error:
        raise ScenarioError([("", f"not valid YAML: {error}")], source) from error
    return validate_scenario(document, source)


def validate_scenario(document: Any, source: str | None = None) -> Scenario:
    if not isinstance(document, Mapping):
        raise ScenarioError([("", "a scenario is a mapping of fields (colibri, name, models...)")], source)
    try:
        return Scenario.model_validate(document)
    except ValidationError as error:
        raise ScenarioError(_problems(error), source) from error


def with_overrides(
    scenario: Scenario, *, models: list[str] | None = None, repeat: int | None = None, max_steps: int | None = None
) -> Scenario:
    """The scenario with run options replaced, validated again (``max_steps`` stays within its cap)."""
    overrides = {
        key: value
        for key, value in (("models", models), ("repeat", repeat), ("max_steps", max_steps))
        if value is not None
    }
    if not overrides:
        return scenario
    document = scenario.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return validate_scenario({**document, **overrides}, f"{scenario.name} (with overrides)")


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that rejects a key given twice in one mapping (YAML would keep the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping", node.start_mark, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _json_document(text: str, source: str) -> Any:
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        document = dict(pairs)
        if len(document) < len(pairs):
            repeated = next(key for index, (key, _) in enumerate(pairs) if key in dict(pairs[:index]))
            raise ScenarioError([("", f"not valid JSON: duplicate key {repeated!r}")], source)
        return document

    try:
        return json.loads(text, object_pairs_hook=unique)
    except json.JSONDecodeError as error:
        raise ScenarioError([("", f"not valid JSON: {error}")], source) from error


# Names pydantic puts in an error's location for a union member or a discriminator tag, not a field.
_BLOCK_TYPES = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result"})
_TYPE_MEMBERS = frozenset({"str", "int", "float", "bool", "dict", "list", "none"})


def _problems(error: ValidationError) -> list[tuple[str, str]]:
    """(field path, message) for each error, union bookkeeping removed, deeper union errors preferred."""
    collected: list[tuple[str, str, bool]] = []
    for item in error.errors(include_url=False):
        context = item.get("ctx") or {}
        if item["type"] == "scenario_references":
            collected.extend((path, message, False) for path, message in context["problems"])
            continue
        path, via_union = _clean_loc(item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        collected.append((path, message, via_union and item["type"].endswith("_type")))
    problems: list[tuple[str, str]] = []
    for path, message, shallow in collected:
        deeper = any(other != path and other.startswith(path) for other, _, _ in collected)
        if (shallow and deeper) or (path, message) in problems:
            continue
        problems.append((path, message))
    return problems


def _clean_loc(loc: tuple[int | str, ...]) -> tuple[str, bool]:
    parts: list[int | str] = []
    via_union = False
    for index, part in enumerate(loc):
        if isinstance(part, str) and ("[" in part or part in _TYPE_MEMBERS):
            via_union = True
            continue
        tagged = isinstance(part, str) and parts and isinstance(parts[-1], int) and index + 1 < len(loc)
        if tagged and part in ASSERTION_TYPES | _BLOCK_TYPES:
            continue
        parts.append(part)
    return _loc_path(tuple(parts)), via_union


def _loc_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path
