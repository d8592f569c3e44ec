"""Each tool's argument model as the SDK validates it: the tool's input model from
:mod:`colibri_router.call.schema` / :mod:`colibri_router.schema_tools`, handed to the tool whole.

Imported by a tool's first call (and by :mod:`.schemas` to generate the published schemas), never at
start-up: building these models is most of what the tool list would otherwise cost to start.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict

from colibri_router.ask_many.schema import RouterAskManyInput
from colibri_router.call.schema import RouterCallInput
from colibri_router.schema_tools import RouterModelsInput, RouterRunInput, RouterThreadsInput, RouterUsageInput


class _WholeArguments(ArgModelBase):
    """The SDK validates a tool's arguments with its model and hands the tool the validated model
    whole (as ``arguments``), instead of spreading its fields as keyword arguments."""

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": self}


class RouterCallArguments(RouterCallInput, _WholeArguments):
    model_config = ConfigDict(title="router_call arguments")


class RouterAskManyArguments(RouterAskManyInput, _WholeArguments):
    model_config = ConfigDict(title="router_ask_many arguments")


class RouterModelsArguments(RouterModelsInput, _WholeArguments):
    model_config = ConfigDict(title="router_models arguments")


class RouterThreadsArguments(RouterThreadsInput, _WholeArguments):
    model_config = ConfigDict(title="router_threads arguments")


class RouterUsageArguments(RouterUsageInput, _WholeArguments):
    model_config = ConfigDict(title="router_usage arguments")


class RouterRunArguments(RouterRunInput, _WholeArguments):
    model_config = ConfigDict(title="router_run arguments")


# Tool name → its argument model.
ARGUMENTS: dict[str, type[ArgModelBase]] = {
    "router_call": RouterCallArguments,
    "router_ask_many": RouterAskManyArguments,
    "router_models": RouterModelsArguments,
    "router_threads": RouterThreadsArguments,
    "router_usage": RouterUsageArguments,
    "router_run": RouterRunArguments,
}
