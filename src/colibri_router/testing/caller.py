"""The seam between the agent-testing runner and whatever answers model calls.

The runner never talks to a provider itself: it hands a :class:`ModelCall` to a :class:`ModelCaller`
and gets a :class:`ModelStep` back, or a :class:`ModelCallError` when the call failed for good
(after the caller's own retries). The real router is one such caller; tests script one; replay
(:mod:`colibri_router.testing.record`) is another. Everything here is plain data in the shapes
``router_call`` already speaks: Anthropic Messages dicts in, the router's normalized result out.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

Repair = Literal["markers_parsed", "ids_repaired", "arguments_unparseable", "tool_choice_nudged", "output_repaired"]
"""How a caller had to repair a model's tool calling, as a fact rather than prose:

- ``markers_parsed``: tool calls were found as marker text inside the answer (K2 without a parser);
- ``ids_repaired``: call IDs were missing, duplicated or malformed and were replaced;
- ``arguments_unparseable``: a call's argument text was not a JSON object;
- ``tool_choice_nudged``: the provider could not force the requested ``tool_choice``, so the call
  asked for it in words instead;
- ``output_repaired``: the answer did not match ``response_schema`` and was asked for again once.
"""

CallPurpose = Literal["step", "judge"]


class CallOrigin(BaseModel):
    """Where a call comes from inside a scenario run: the recording key, and a label for ledgers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: str
    model: str = Field(description="The run's model (the report column), even after a scripted switch.")
    repeat: int = Field(ge=1, description="1-based repeat of the run.")
    purpose: CallPurpose = "step"
    step: int = Field(ge=0, description="1-based model call of the run; for a judge, its index in `expect`.")


class ModelCall(BaseModel):
    """One model call, as ``router_call`` would receive it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="An alias or `<provider>:<model>`.")
    system: str | None = None
    messages: list[dict[str, Any]] = Field(description="Anthropic Messages shape, ending with a user turn.")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="{name, description?, input_schema}.")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="router_call options other than the conversation: temperature, max_tokens, tool_choice...",
    )
    origin: CallOrigin

    def request(self) -> dict[str, Any]:
        """What the model is asked, without where the call comes from: the part a recording hashes."""
        return self.model_dump(mode="json", exclude={"origin"})


class ModelToolCall(BaseModel):
    """A tool call as the caller decoded it, under the scenario's own tool name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = Field(
        default=None, description="Set when the model's argument text was not a JSON object; `input` is then unusable."
    )
    raw_arguments: str | None = Field(
        default=None, description="The argument text as the model wrote it, when unparseable."
    )


class ModelStep(BaseModel):
    """One model answer, normalized: what ``router_call`` returns, plus its repairs as data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(default="", description="The answer's text blocks, joined (never a rendering of tool calls).")
    tool_calls: list[ModelToolCall] = Field(default_factory=list)
    message: dict[str, Any] | None = Field(
        default=None,
        description="The assistant turn to append, as router_call returns it; built from text and calls if None.",
    )
    provider: str | None = None
    model: str | None = Field(default=None, description="The model that answered, as the provider reported it.")
    stop_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict, description="prompt_tokens, completion_tokens, ...")
    cost_usd: float | None = Field(default=None, ge=0, description="None when the price is unknown.")
    latency_ms: int = Field(default=0, ge=0)
    warnings: list[str] = Field(default_factory=list)
    repairs: list[Repair] = Field(default_factory=list)
    parsed: Any = Field(default=None, description="With response_schema in params: the answer as JSON.")


class ModelCallError(Exception):
    """A call that failed for good: the run stops with ``stop_reason: error``."""

    def __init__(self, code: str, kind: str, message: str) -> None:
        super().__init__(f"{code} ({kind}): {message}")
        self.code = code
        self.kind = kind
        self.message = message


class ModelCaller(Protocol):
    """Anything that answers a :class:`ModelCall`: an async function or an object with ``__call__``."""

    async def __call__(self, call: ModelCall, /) -> ModelStep: ...
