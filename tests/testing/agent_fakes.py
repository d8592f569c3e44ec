"""A scripted model for agent-testing tests: no network, answers decided by the call itself.

``ScriptedCaller`` answers the n-th model call of a run (``origin.step``) from the script of the
model the call asks for, so concurrent runs cannot disturb each other's answers. Scripts are lists
(step 1 first) or dicts keyed by step; a callable script decides from the whole call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from anyio.lowlevel import checkpoint

from colibri_router.testing import ModelCall, ModelCallError, ModelStep, ModelToolCall, Repair

Script = Sequence[ModelStep] | Mapping[int, ModelStep] | Callable[[ModelCall], ModelStep]


def text(answer: str, **fields: Any) -> ModelStep:
    """An answer without tool calls."""
    return ModelStep(text=answer, stop_reason="end_turn", **fields)


def calls(
    *requested: tuple[str, dict[str, Any]], say: str = "", repairs: Sequence[Repair] = (), **fields: Any
) -> ModelStep:
    """An answer calling ``(tool, input)`` pairs, in one step (several pairs: a parallel step)."""
    tool_calls = [
        ModelToolCall(id=f"call_{name}_{index}", name=name, input=arguments)
        for index, (name, arguments) in enumerate(requested)
    ]
    return ModelStep(text=say, tool_calls=tool_calls, stop_reason="tool_use", repairs=list(repairs), **fields)


def bad_json_call(name: str, raw: str) -> ModelStep:
    """A call whose argument text was not JSON, as the router reports it."""
    call = ModelToolCall(id=f"call_{name}_bad", name=name, input={}, parse_error="Expecting value", raw_arguments=raw)
    return ModelStep(tool_calls=[call], stop_reason="tool_use", repairs=["arguments_unparseable"])


class ScriptedCaller:
    """Answers from per-model scripts and keeps every call it was given."""

    def __init__(self, scripts: Mapping[str, Script], *, delay_s: float = 0.0) -> None:
        self.scripts = scripts
        self.delay_s = delay_s
        self.calls: list[ModelCall] = []

    async def __call__(self, call: ModelCall, /) -> ModelStep:
        self.calls.append(call)
        if self.delay_s:
            await anyio.sleep(self.delay_s)
        else:
            await checkpoint()
        script = self.scripts[call.model]
        if callable(script):
            return script(call)
        if isinstance(script, Mapping):
            if call.origin.step not in script:
                raise AssertionError(f"{call.model} has no answer scripted for step {call.origin.step}")
            return script[call.origin.step]
        if call.origin.step > len(script):
            raise AssertionError(f"{call.model} has no answer scripted for step {call.origin.step}")
        return script[call.origin.step - 1]

    def steps_for(self, model: str, repeat: int = 1) -> list[ModelCall]:
        return [call for call in self.calls if call.origin.model == model and call.origin.repeat == repeat]


def failing(code: str = "KIMI_API_ERROR", kind: str = "RATE_LIMITED") -> Callable[[ModelCall], ModelStep]:
    def fail(call: ModelCall) -> ModelStep:
        raise ModelCallError(code, kind, "upstream said no")

    return fail


def scenario(**overrides: Any) -> dict[str, Any]:
    """A small valid scenario document (one tool, one turn) with ``overrides`` applied."""
    document: dict[str, Any] = {
        "colibri": 1,
        "name": "lookup",
        "models": ["fake"],
        "prompt": "Look up order 12345.",
        "tools": [
            {
                "name": "lookup_order",
                "input_schema": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
                "responses": [{"when": {"order_id": "12345"}, "then": {"status": "shipped"}}],
            }
        ],
    }
    document.update(overrides)
    return document
