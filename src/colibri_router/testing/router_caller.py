"""The real model caller: each scenario step is one in-process ``router_call``, served as the MCP tool
serves it (:mod:`colibri_router.served`), so every provider rule (K2 IDs, marker parsing, reasoning
replay, retries, the deadline), the ledger and the budgets apply. The router's repairs come back as data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import httpx
from pydantic import ValidationError

from colibri_router.errors import ColibriError
from colibri_router.providers import load_registry
from colibri_router.providers.placing import UnknownModelError
from colibri_router.router.call import Outcome
from colibri_router.schema import RouterCallInput
from colibri_router.served import served  # the router loads with the first call, not with the package
from colibri_router.settings import load_settings
from colibri_router.testing.caller import ModelCall, ModelCallError, ModelStep, ModelToolCall, Repair


class RouterCaller:
    """A :class:`~colibri_router.testing.caller.ModelCaller` backed by the router."""

    def __init__(self, *, principal: str | None = None, client: httpx.AsyncClient | None = None) -> None:
        self._principal = principal
        self._client = client

    async def __call__(self, call: ModelCall, /) -> ModelStep:

        arguments: dict[str, Any] = {**call.params, "model": call.model, "messages": call.messages}
        if call.system is not None:
            arguments["system_prompt"] = call.system
        if call.tools:
            arguments["tools"] = call.tools
        try:
            request = RouterCallInput.model_validate(arguments)
        except ValidationError as error:
            raise ModelCallError("INVALID_REQUEST", "INVALID_REQUEST", str(error)) from error
        try:
            outcome = await served(request, principal=self._principal, client=self._client)
        except ColibriError as error:
            raise ModelCallError(error.code, error.kind, error.message) from error
        return step_of(outcome)

    def unknown_models(self, named: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """The (field path, problem) of each name no rule places, checked before any run starts (then
        the hint to send an unknown model anyway, once): a typo would otherwise reach the default
        provider on every run."""

        registry, settings = load_registry(), load_settings()
        problems: list[tuple[str, str]] = []
        hint = ""
        for path, name in named:
            try:
                registry.choose(None, name, settings)
            except UnknownModelError as error:
                problems.append((path, error.clause))
                hint = error.hint
            except ColibriError:
                continue  # any other problem is the call's to report, as it always was
        return [*problems, ("", hint)] if problems else []


def step_of(outcome: Outcome) -> ModelStep:
    result = outcome.result
    return ModelStep(
        text=result.content,
        tool_calls=[_tool_call(call.id, call.name, call.input) for call in result.tool_calls],
        message=result.message.model_dump() if result.message else None,
        provider=result.provider,
        model=result.model,
        stop_reason=result.stop_reason,
        usage={
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "cached_tokens": result.cached_tokens,
            "cache_write_tokens": result.cache_write_tokens,
            "reasoning_tokens": result.reasoning_tokens,
        },
        cost_usd=result.cost_usd,
        latency_ms=result.latency_ms,
        warnings=result.warnings,
        repairs=[cast(Repair, repair) for repair in outcome.repairs],
        parsed=result.parsed,
    )


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> ModelToolCall:
    """Arguments the router could not parse arrive as ``{"_parse_error", "_raw"}``: they become the
    step's parse error, and the input is empty."""
    if "_parse_error" in arguments:
        return ModelToolCall(
            id=call_id, name=name, parse_error=str(arguments["_parse_error"]), raw_arguments=str(arguments.get("_raw"))
        )
    return ModelToolCall(id=call_id, name=name, input=arguments)
