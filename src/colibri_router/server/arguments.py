"""Each tool's argument model as the SDK validates it: the tool's input model (named in
:mod:`.table`), handed to the tool whole.

Imported by a tool's first call (and by :mod:`.generate_schemas` to generate the published schemas),
never at start-up: building these models is most of what the tool list would otherwise cost to start.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import BaseModel, ConfigDict

from colibri_router.server.table import TOOLS, ToolEntry, load


class _WholeArguments(ArgModelBase):
    """The SDK validates a tool's arguments with its model and hands the tool the validated model
    whole (as ``arguments``), instead of spreading its fields as keyword arguments."""

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": self}


def _arguments(entry: ToolEntry) -> type[ArgModelBase]:
    """``entry``'s input model as its argument model: ``RouterCallInput`` → ``RouterCallArguments``."""
    model: type[BaseModel] = load(entry.arguments)

    class Arguments(model, _WholeArguments):  # type: ignore[valid-type,misc]  # the model is the table's
        model_config = ConfigDict(title=f"{entry.name} arguments")

    Arguments.__name__ = Arguments.__qualname__ = model.__name__.removesuffix("Input") + "Arguments"
    return Arguments


# Tool name → its argument model.
ARGUMENTS: dict[str, type[ArgModelBase]] = {entry.name: _arguments(entry) for entry in TOOLS}
