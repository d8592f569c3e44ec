"""The ``expect`` list of a scenario: one pydantic model per assertion type, told apart by ``type``.

Every assertion may be scoped to a scripted turn (``turn: <label>``) and be ``soft`` (reported,
never failing the run). Criteria-less assertions are rejected when the scenario loads, so an
assertion always checks something; one whose scope is empty in a run fails saying so
(:mod:`colibri_router.testing.assertions`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

DEFAULT_JUDGE_THRESHOLD = 0.7
# Only complete runs are scored: a run stopped by an error, the budget, the timeout or a cancel is an
# error, never evaluated, so those stop reasons could never satisfy a stop_reason assertion.
SCORED_STOP_REASONS = ("end_turn", "max_steps")


class _Assertion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str | None = Field(default=None, min_length=1, description="A name for this assertion in reports.")
    turn: str | None = Field(
        default=None, min_length=1, description="Check only the steps of the scripted turn so labelled."
    )
    soft: bool = Field(default=False, description="Reported, but never fails the run.")


def _times(value: Any) -> Any:
    return {"min": value, "max": value} if isinstance(value, int) and not isinstance(value, bool) else value


class Times(BaseModel):
    """How many matching calls: ``n`` exactly, or ``{min, max}`` (min defaults to 1, max to unbounded)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: int = Field(default=1, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Times:
        if self.max is not None and self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min}); for a tool never called use tool_not_called")
        return self

    def allows(self, count: int) -> bool:
        return count >= self.min and (self.max is None or count <= self.max)

    def describe(self) -> str:
        if self.max == self.min:
            return f"exactly {self.min}"
        if self.max is None:
            return f"at least {self.min}"
        return f"between {self.min} and {self.max}"


class ToolCalled(_Assertion):
    type: Literal["tool_called"]
    tool: str
    args: dict[str, Any] | None = Field(default=None, description="A pattern the call's arguments must match.")
    args_mode: Literal["partial", "exact"] = "partial"
    times: Annotated[Times, BeforeValidator(_times)] = Field(default_factory=Times)


class ToolNotCalled(_Assertion):
    type: Literal["tool_not_called"]
    tool: str
    args: dict[str, Any] | None = Field(
        default=None, description="Only calls whose arguments match this pattern count."
    )
    args_mode: Literal["partial", "exact"] = "partial"


class NoToolCalls(_Assertion):
    type: Literal["no_tool_calls"]


class ExpectedCall(BaseModel):
    """One call in an expected trajectory: the tool, and optionally an argument pattern."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    args: dict[str, Any] | None = None


def _steps(value: Any) -> Any:
    """Every step as a group of calls: a name or ``{tool, args}`` is a group of one, a list is one parallel step."""

    def call(item: Any) -> Any:
        return {"tool": item} if isinstance(item, str) else item

    if not isinstance(value, list):
        return value
    return [[call(item) for item in step] if isinstance(step, list) else [call(step)] for step in value]


TrajectoryMode = Literal["exact", "in_order", "unordered", "contains", "within"]


class Trajectory(_Assertion):
    type: Literal["trajectory"]
    steps: Annotated[list[Annotated[list[ExpectedCall], Field(min_length=1)]], BeforeValidator(_steps)]
    mode: TrajectoryMode = "exact"

    @model_validator(mode="after")
    def _checks_something(self) -> Trajectory:
        if not self.steps and self.mode in ("in_order", "contains"):
            raise ValueError(f"steps is empty: mode {self.mode} would check nothing")
        return self


class ArgsValid(_Assertion):
    type: Literal["args_valid"]
    tool: str | None = Field(default=None, description="Check only this tool's calls; all calls when absent.")


def _strings(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


Strings = Annotated[list[str], BeforeValidator(_strings)]


class FinalText(_Assertion):
    type: Literal["final_text"]
    contains: Strings = Field(default_factory=list)
    icontains: Strings = Field(default_factory=list)
    not_contains: Strings = Field(default_factory=list)
    regex: str | None = None
    equals: str | None = None
    max_chars: int | None = Field(default=None, ge=0)

    @field_validator("regex")
    @classmethod
    def _compiles(cls, regex: str | None) -> str | None:
        if regex is not None:
            try:
                re.compile(regex)
            except re.error as error:
                raise ValueError(f"invalid regular expression: {error}") from error
        return regex

    @model_validator(mode="after")
    def _checks_something(self) -> FinalText:
        if not self.model_fields_set & {"contains", "icontains", "not_contains", "regex", "equals", "max_chars"}:
            raise ValueError("give at least one of contains, icontains, not_contains, regex, equals, max_chars")
        return self


class Parsed(_Assertion):
    """The last answer's ``parsed`` (params: ``response_schema``): equal to ``equals``, or holding every
    key of ``contains`` with its value."""

    type: Literal["parsed"]
    equals: Any = None
    contains: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _checks_something(self) -> Parsed:
        if not self.model_fields_set & {"equals", "contains"}:
            raise ValueError("give equals or contains")
        return self


class StopReason(_Assertion):
    type: Literal["stop_reason"]
    accepted: list[Literal["end_turn", "max_steps"]] = Field(
        alias="in", min_length=1, description="The accepted stop reasons (runs stopped otherwise are errors)."
    )


class Budget(_Assertion):
    type: Literal["budget"]
    max_steps: int | None = Field(default=None, ge=0)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_latency_ms: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _checks_something(self) -> Budget:
        if self.limits() == {}:
            raise ValueError("give at least one of max_steps, max_tool_calls, max_cost_usd, max_latency_ms")
        return self

    def limits(self) -> dict[str, float]:
        named = {
            "max_steps": self.max_steps,
            "max_tool_calls": self.max_tool_calls,
            "max_cost_usd": self.max_cost_usd,
            "max_latency_ms": self.max_latency_ms,
        }
        return {name: limit for name, limit in named.items() if limit is not None}


class CleanProtocol(_Assertion):
    type: Literal["clean_protocol"]


class Judge(_Assertion):
    type: Literal["judge"]
    rubric: str = Field(min_length=1)
    model: str = Field(min_length=1, description="The judging model: an alias or `<provider>:<model>`.")
    threshold: float = Field(default=DEFAULT_JUDGE_THRESHOLD, ge=0, le=1)


Assertion = Annotated[
    ToolCalled
    | ToolNotCalled
    | NoToolCalls
    | Trajectory
    | ArgsValid
    | FinalText
    | Parsed
    | StopReason
    | Budget
    | CleanProtocol
    | Judge,
    Field(discriminator="type"),
]

_ASSERTION_MODELS = (
    ToolCalled,
    ToolNotCalled,
    NoToolCalls,
    Trajectory,
    ArgsValid,
    FinalText,
    Parsed,
    StopReason,
    Budget,
    CleanProtocol,
    Judge,
)
ASSERTION_TYPES = frozenset(get_args(model.model_fields["type"].annotation)[0] for model in _ASSERTION_MODELS)


def tools_named(assertion: Assertion) -> list[str]:
    """The scenario tools an assertion refers to (each must exist)."""
    if isinstance(assertion, Trajectory):
        return [call.tool for step in assertion.steps for call in step]
    if isinstance(assertion, ToolCalled | ToolNotCalled):
        return [assertion.tool]
    if isinstance(assertion, ArgsValid) and assertion.tool is not None:
        return [assertion.tool]
    return []


def patterns_of(assertion: Assertion) -> list[tuple[str, dict[str, Any]]]:
    """The argument patterns an assertion holds, each with its field path inside the assertion."""
    if isinstance(assertion, ToolCalled | ToolNotCalled) and assertion.args is not None:
        return [("args", assertion.args)]
    if isinstance(assertion, Trajectory):
        return [
            (f"steps[{s}][{c}].args", call.args)
            for s, step in enumerate(assertion.steps)
            for c, call in enumerate(step)
            if call.args is not None
        ]
    return []
