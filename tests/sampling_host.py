"""The host's model for the ``provider: "host"`` tests, in memory and over stdio: it answers every
sampling request, numbered, and remembers what it was asked."""

from __future__ import annotations

from typing import Any

from mcp.types import CreateMessageRequestParams, CreateMessageResult, TextContent


class Host:
    """``template`` makes the n-th answer's text (``"host answer {}"`` → ``host answer 1``)."""

    def __init__(self, template: str = "host answer {}") -> None:
        self.template = template
        self.asked: list[CreateMessageRequestParams] = []

    async def __call__(self, context: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
        self.asked.append(params)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=self.template.format(len(self.asked))),
            model="host-model-7",
            stop_reason="endTurn",
        )
