"""Inputs and outputs of the tools beside ``router_call``: ``router_models``, ``router_threads``,
``router_usage`` and ``router_run``, as pydantic models (they generate the schemas the host sees)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class RouterModelsInput(BaseModel):
    """Arguments of ``router_models``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str | None = Field(None, min_length=1, description="Only this provider.")
    live: bool = Field(False, description="Also ask each configured provider's model-list endpoint (10 s).")


class ProviderModels(BaseModel):
    name: str
    wire: str
    configured: bool = Field(
        description="Its key is set (local servers: their base-URL variable; command-line agents: the "
        "command runs; host: this client offers sampling)."
    )
    base_url: str
    default_model: str | None
    models: list[str]
    live_error: str | None = Field(description="Why the live list failed, when asked for and it did.")


class RouterModelsResult(BaseModel):
    """What ``router_models`` returns (``structuredContent``)."""

    providers: list[ProviderModels]
    aliases: dict[str, str] = Field(description="Alias → provider:model.")


class RouterThreadsInput(BaseModel):
    """Arguments of ``router_threads``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Literal["list", "get", "delete"] = Field("list", description="list threads, get one, or delete one.")
    thread_id: str | None = Field(None, min_length=1, description="For get and delete.")
    limit: int = Field(20, ge=1, le=200, description="For list: how many, newest first.")

    @model_validator(mode="after")
    def _thread_for_get_and_delete(self) -> RouterThreadsInput:
        if self.action != "list" and self.thread_id is None:
            raise ValueError(f"`{self.action}` needs `thread_id`")
        return self


class ThreadInfo(BaseModel):
    thread_id: str
    title: str = Field(description="The first user text, cut to 80 characters.")
    provider: str
    model: str
    turns: int
    updated_at: str


class RouterThreadsResult(BaseModel):
    """What ``router_threads`` returns; only the fields of the action taken are present."""

    threads: list[ThreadInfo] | None = None
    thread_id: str | None = None
    messages: list[dict[str, Any]] | None = Field(default=None, description="The stored turns, in `message`'s shape.")
    deleted: bool | None = None


class RouterUsageInput(BaseModel):
    """Arguments of ``router_usage``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    since: Literal["today", "7d", "30d", "all"] = Field("30d", description="UTC days, today included.")
    by: Literal["provider", "model", "day"] | None = Field(None, description="Group the totals.")


class UsageGroup(BaseModel):
    key: str | None = Field(description="The provider, model or UTC day; null for the overall total.")
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float = Field(description="Sum over priced calls.")
    unpriced_calls: int


class RouterUsageResult(BaseModel):
    """What ``router_usage`` returns."""

    since: str
    by: str | None
    groups: list[UsageGroup]
    total: UsageGroup


class RouterRunInput(BaseModel):
    """Arguments of ``router_run``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: dict[str, Any] | None = Field(None, description="A scenario object (colibri: 1; see the README).")
    scenario_path: str | None = Field(None, min_length=1, description="Or a YAML/JSON scenario file on this machine.")
    models: list[str] | None = Field(None, min_length=1, description="Replace the scenario's models.")
    repeat: int | None = Field(None, ge=1, le=10, description="Runs per model.")
    max_steps: int | None = Field(None, ge=1, le=50, description="Model calls per run.")
    max_cost_usd: float | None = Field(None, ge=0, description="Stop starting runs once this much is spent.")
    timeout_s: float | None = Field(None, gt=0, description="Wall-clock limit for the whole scenario.")
    detail: Literal["summary", "full"] = Field("summary", description="full adds every run's turns and calls.")

    @model_validator(mode="after")
    def _one_scenario(self) -> RouterRunInput:
        if (self.scenario is None) == (self.scenario_path is None):
            raise ValueError("give exactly one of `scenario` (an object) or `scenario_path` (a file)")
        return self
