"""Benchmark 1: the adapter's in-process overhead over a bare httpx exchange of the same request.

Arms, interleaved on one ``httpx.AsyncClient`` against the lean upstream (its own process) at latency 0:

- bare: POST the very bytes and headers the adapter sends (captured once with an httpx event hook)
  to the same URL, read the SSE stream with httpx_sse, json-decode every data payload;
- adapter: ``create_kimi_completion`` with the default logger (its structlog line goes to /dev/null);
- adapter, no-op logger: the same with ``logger=`` a function that drops the line (information: what
  the per-call log line costs);
- adapter, default path: the same call with no ``http_client``, as a library user writes it (the
  loop's shared client); judged against the adapter arm with the injected client.

A second pair repeats bare vs adapter when the upstream answers plain JSON instead of SSE (the
adapter accepts that too; the lean upstream's ``/json`` base URL answers so): bare is
``client.post`` + ``json.loads``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import httpx
from httpx_sse import EventSource

from benchmarks.measure import Plan, Report, Row, interleave, median, ms, paired_ratios
from benchmarks.upstream import (
    ANSWER,
    PROMPT,
    benchmark_client,
    default_logger_to_devnull,
    kimi_options,
    lean_upstream,
)
from colibri_router.adapters import KimiCompletionOptions, create_kimi_completion

TARGET_RATIO = 1.10


@dataclass(frozen=True, slots=True)
class SentRequest:
    """What the adapter put on the wire: enough for a bare client to send the same request."""

    url: str
    headers: dict[str, str]
    content: bytes


async def adapter_request(options: KimiCompletionOptions) -> SentRequest:
    """Make one adapter call through a spying client; the request it sent (the answer is checked)."""
    sent: list[httpx.Request] = []

    async def spy(request: httpx.Request) -> None:
        sent.append(request)

    async with httpx.AsyncClient(event_hooks={"request": [spy]}, trust_env=False) as client:
        result = await create_kimi_completion(PROMPT, replace(options, http_client=client))
    if result.content != ANSWER or len(sent) != 1:
        raise RuntimeError(f"unexpected adapter result {result.content!r} after {len(sent)} request(s)")
    request = sent[0]
    headers = {name: request.headers[name] for name in ("authorization", "content-type", "accept")}
    return SentRequest(str(request.url), headers, request.content)


async def bare_stream(client: httpx.AsyncClient, request: SentRequest) -> None:
    """The least a streaming client does: POST, read the SSE events, json-decode every payload."""
    async with client.stream("POST", request.url, headers=request.headers, content=request.content) as response:
        response.raise_for_status()
        payloads = [json.loads(e.data) async for e in EventSource(response).aiter_sse() if e.data != "[DONE]"]
    if not payloads:
        raise RuntimeError("the bare arm read no events")


async def run(plan: Plan, json_plan: Plan) -> Report:
    default_logger_to_devnull()
    async with lean_upstream() as upstream, benchmark_client() as client:
        sse_options = kimi_options(upstream.kimi_base_url, client)
        json_options = kimi_options(upstream.kimi_json_base_url, client)
        return Report([*await _sse_rows(sse_options, client, plan), await _json_row(json_options, client, json_plan)])


async def _sse_rows(options: KimiCompletionOptions, client: httpx.AsyncClient, plan: Plan) -> list[Row]:
    quiet = replace(options, logger=_drop)
    default_path = replace(options, http_client=None)
    request = await adapter_request(options)

    async def bare() -> None:
        await bare_stream(client, request)

    async def adapter() -> None:
        await create_kimi_completion(PROMPT, options)

    async def adapter_quiet() -> None:
        await create_kimi_completion(PROMPT, quiet)

    async def adapter_default_path() -> None:
        await create_kimi_completion(PROMPT, default_path)

    bare_s, adapter_s, quiet_s, default_s = await interleave([bare, adapter, adapter_quiet, adapter_default_path], plan)
    return [
        _ratio_row("1a in-process overhead, SSE (default logger → /dev/null)", adapter_s, bare_s, TARGET_RATIO),
        _ratio_row("1b in-process overhead, SSE (no-op logger)", quiet_s, bare_s, None),
        _ratio_row(
            "1d default path (no http_client) vs injected client, SSE",
            default_s,
            adapter_s,
            TARGET_RATIO,
            baseline_name="injected",
        ),
    ]


async def _json_row(options: KimiCompletionOptions, client: httpx.AsyncClient, plan: Plan) -> Row:
    request = await adapter_request(options)

    async def bare() -> None:
        response = await client.post(request.url, headers=request.headers, content=request.content)
        response.raise_for_status()
        json.loads(response.content)

    async def adapter() -> None:
        await create_kimi_completion(PROMPT, options)

    bare_s, adapter_s = await interleave([bare, adapter], plan)
    return _ratio_row(
        "1c in-process overhead, JSON answer (default logger → /dev/null)", adapter_s, bare_s, TARGET_RATIO
    )


def _ratio_row(
    name: str, subject: list[float], baseline: list[float], target: float | None, *, baseline_name: str = "bare"
) -> Row:
    ratio = median(paired_ratios(subject, baseline))
    measured = (
        f"{ratio:.3f}x (median of {len(subject)} paired ratios; "
        f"medians {ms(median(subject))} vs {baseline_name} {ms(median(baseline))})"
    )
    if target is None:
        return Row(name, measured, "— (information)", None)
    return Row(name, measured, f"≤ {target:.2f}x", ratio <= target)


def _drop(line: str) -> None:
    """A logger that drops the line."""
