"""The library functions' shared body: the per-call options and one prompt sent through the core's
pipeline (:mod:`colibri_router.router.pipeline`) to any registry provider, returning a ``CompletionResult``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from colibri_router.conversation import AnthropicTool, CompletionRequest, CompletionResult, tool_specs, user_prompt
from colibri_router.errors import InvalidRequestError
from colibri_router.progress import CallProgress
from colibri_router.providers import ProviderSpec, connect
from colibri_router.retry import Deadline
from colibri_router.router.pipeline import DEFAULT_MAX_TOKENS, run_completion
from colibri_router.settings import load_settings
from colibri_router.wires import codec_for_call


@dataclass(frozen=True, kw_only=True, slots=True)
class CompletionOptions:
    """Per-call options of the library functions; every field optional (docs/python-api.md)."""

    model: str | None = None
    max_tokens: int | None = None
    system_prompt: str | None = None
    api_key: str | None = None
    base_url: str | None = None
    http_client: httpx.AsyncClient | None = None
    logger: Callable[[str], None] | None = None
    sleep: Callable[[float], Awaitable[None]] | None = None
    timeout_s: float | None = None


async def complete_prompt(
    provider: ProviderSpec,
    prompt: str,
    tools: Sequence[AnthropicTool] | Sequence[Mapping[str, Any]],
    options: CompletionOptions | None,
    *,
    default_model: str | None = None,
) -> CompletionResult:
    """The library functions' shared body: settings are read now, never at import."""
    options = options or CompletionOptions()
    settings = load_settings()
    connection = connect(provider, options.api_key, options.base_url, key_option="api_key in the options")
    model = options.model or default_model or provider.default_model
    if model is None:
        raise InvalidRequestError(f"provider {provider.name!r} has no default model: pass options.model")
    request = CompletionRequest(
        model=model,
        messages=user_prompt(prompt),
        max_tokens=options.max_tokens if options.max_tokens is not None else DEFAULT_MAX_TOKENS,
        system=options.system_prompt,
        tools=tool_specs(tools),
    )
    completion = await run_completion(
        codec_for_call(provider, model, settings),
        request,
        connection,
        deadline=Deadline.after(options.timeout_s or settings.timeout_s),
        progress=CallProgress(provider.name),
        client=options.http_client,
        sleep=options.sleep or anyio.sleep,
        log=options.logger,
    )
    return completion.contract_result()
