"""``router_threads``' and ``router_usage``'s inputs and outputs, as pydantic models (they generate the
schemas the host sees)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


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
