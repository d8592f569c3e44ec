"""``router_run``'s input, as a pydantic model (it generates the schema the host sees; the result is
the report, :mod:`.report`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


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
    background: Literal["auto"] | bool = Field("auto", description="As in router_call: a job handle (router_job).")

    @model_validator(mode="after")
    def _one_scenario(self) -> RouterRunInput:
        if (self.scenario is None) == (self.scenario_path is None):
            raise ValueError("give exactly one of `scenario` (an object) or `scenario_path` (a file)")
        return self
