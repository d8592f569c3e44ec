"""``router_ask_many``'s input and output, as pydantic models.

The input IS router_call's input (:class:`RouterCallInput`, subclassed): every field router_call takes
comes along, validators included, and a field added there is accepted here too, except the four that
name one answerer or one conversation's state (``provider``, ``model``, ``thread_id``, ``fallback``),
which ``models`` replaces. Its published schema names router_call's shapes instead of repeating them
(``messages``, ``tools``, ``tool_choice``): both tools are in the same list, and every character of
that list is read by the host's model on every turn.

The result is sparse (dumped without nulls): a failed answer is its model, provider, latency and
error; a zero cached, cache-write or reasoning count is left out.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, field_validator, model_validator
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema
from pydantic_core import CoreSchema

from colibri_router.schema import FileReadOut, RouterCallInput, ToolCallOut

MIN_MODELS, MAX_MODELS = 2, 8
SUMMARY_CHARS = 400  # what `detail: "summary"` keeps of each answer's content


class RouterAskManyInput(RouterCallInput):
    """Arguments of ``router_ask_many``: router_call's, with ``models`` instead of one answerer."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    # router_call's fields that make no sense for N answers at once: refused with a readable message.
    NOT_TAKEN: ClassVar[tuple[str, ...]] = ("provider", "model", "thread_id", "fallback")

    provider: SkipJsonSchema[None] = None
    model: SkipJsonSchema[None] = None
    thread_id: SkipJsonSchema[None] = None
    fallback: SkipJsonSchema[None] = None
    models: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=MIN_MODELS,
        max_length=MAX_MODELS,
        description="2-8 models to ask at once: names, aliases or `<provider>:<model>`; no model twice.",
    )
    judge: str | None = Field(
        None, min_length=1, description="A model that reads the answers (anonymised) and writes a verdict."
    )
    judge_instructions: str | None = Field(default=None, min_length=1, description="What the judge should weigh.")
    judge_schema: dict[str, Any] | None = Field(None, description="JSON Schema the verdict must match.")
    detail: Literal["summary", "full"] | None = Field(
        None,
        description=f"summary (default with a judge): each answer's first {SUMMARY_CHARS} characters, no "
        "thinking; full (default without): everything.",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_answerer_fields_are_refused(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [name for name in cls.NOT_TAKEN if data.get(name) is not None]
            if given:
                raise ValueError(
                    f"router_ask_many takes `models` (and no {', '.join(f'`{n}`' for n in given)}): "
                    "each model is asked once, without thread or fallback"
                )
        return data

    @field_validator("judge_schema")
    @classmethod
    def _a_judge_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        return cls._a_json_schema(schema)

    @model_validator(mode="after")
    def _judge_schema_needs_a_judge(self) -> RouterAskManyInput:
        if self.judge_schema is not None and self.judge is None:
            raise ValueError("`judge_schema` shapes the judge's verdict: give `judge` too")
        return self

    @property
    def full(self) -> bool:
        return self.detail == "full" or (self.detail is None and self.judge is None)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """router_call's fields are named, not described again (see the module docstring)."""
        schema = handler.resolve_ref_schema(handler(core_schema))
        for name in RouterCallInput.model_fields.keys() & schema["properties"].keys():
            field = _without_references(schema["properties"][name])
            schema["properties"][name] = {**field, "description": "As in router_call."}
        return schema


def _without_references(schema: Any) -> Any:
    """``schema`` with each of router_call's shapes it names written as a bare object: the types stay
    (a host with no type for a field sends it as ``{}``), the shapes are router_call's to describe."""
    if isinstance(schema, list):
        return [_without_references(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return {"type": "object"}
    return {key: _without_references(value) for key, value in schema.items()}


class _Sparse(BaseModel):
    """A result part dumped without nulls: its schema says what is present, not ``null``."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler.resolve_ref_schema(handler(core_schema))
        for field in schema["properties"].values():
            options = [option for option in field.pop("anyOf", ()) if option != {"type": "null"}]
            if len(options) == 1:
                field.update(options[0])
            elif options:
                field["anyOf"] = options
            if field.get("default", ...) is None:
                del field["default"]
        return schema


class Failure(_Sparse):
    """router_call's error object, without the provider and model its answer already names."""

    code: str
    kind: str
    message: str
    status: int | None = None
    retryable: bool = Field(description="Whether a later identical call can succeed.")
    retry_after_s: float | None = None
    details: dict[str, Any] | None = None


class Answer(_Sparse):
    """One model's answer, or why it has none (``error``)."""

    model: str = Field(description="As the provider reported it.")
    provider: str
    content: str | None = None
    tool_calls: list[ToolCallOut] | None = None
    thinking: str | None = None
    stop_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = Field(default=None, description="Absent: 0 (so the other counts).")
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = Field(default=None, description="Absent: no price known, or failed.")
    latency_ms: int
    warnings: list[str] | None = None
    parsed: Any = None
    error: Failure | None = None


class Verdict(_Sparse):
    model: str
    content: str | None = Field(default=None, description="The judge's synthesis; answers are named by label.")
    agreement: float | None = Field(
        default=None, description="0-1, how far the answers agree; absent: the judge gave none."
    )
    cost_usd: float | None = None
    labels: dict[str, str] = Field(description="Label → the model it stands for, as given in `models`.")
    parsed: Any = None
    error: Failure | None = None


class RouterAskManyResult(_Sparse):
    """What ``router_ask_many`` returns (``structuredContent``, without null fields)."""

    answers: list[Answer] = Field(description="In the order of `models`.")
    total_cost_usd: float = Field(description="Priced answers and verdict.")
    wall_ms: int
    verdict: Verdict | None = None
    files_read: list[FileReadOut] | None = Field(None, description="What `files` sent to every model.")
    warnings: list[str] | None = None
