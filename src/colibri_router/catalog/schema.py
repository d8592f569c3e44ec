"""``router_models``'s input and output, as pydantic models (they generate the schema the host sees)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
    structured_output: str = Field(default="", description="How response_schema is asked for.")
    structured_output_models: dict[str, str] = Field(default_factory=dict, description="Models whose form differs.")
    keys: int = Field(0, description="Its API keys (several: used in turn).")
    keys_usable: int = Field(0, description="Of those, not set aside now.")


class RouterModelsResult(BaseModel):
    """What ``router_models`` returns (``structuredContent``)."""

    providers: list[ProviderModels]
    aliases: dict[str, str] = Field(description="Alias → provider:model.")
