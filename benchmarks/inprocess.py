"""Benchmark 1: the adapter's in-process overhead over a bare httpx exchange of the same request.

Arms, interleaved on one ``httpx.AsyncClient`` against the fake at latency 0:

- bare: POST the very bytes and headers the adapter sent (captured from the fake) to the same URL,
  read the SSE stream with httpx_sse, json-decode every data payload;
- adapter: ``create_kimi_completion`` with the default logger (its structlog line goes to /dev/null);
- adapter, no-op logger: the same with ``logger=`` a function that drops the line (information: what
  the per-call log line costs).

A second pair repeats bare vs adapter when the upstream answers plain JSON instead of SSE (the
adapter accepts that too): bare is ``client.post`` + ``json.loads``. The fake is a Python thread
server in this process; its cost is in every arm, which makes the ratios conservative.
"""

from __future__ import annotations

import json
from dataclasses import replace

import httpx
from httpx_sse import EventSource

from benchmarks.measure import Plan, Report, Row, interleave, median, ms, paired_ratios
from benchmarks.upstream import (
    ANSWER,
    PROMPT,
    FakeUpstream,
    benchmark_client,
    default_logger_to_devnull,
    kimi_options,
    kimi_text,
    raw_body,
)
from colibri_router.adapters import create_kimi_completion

TARGET_RATIO = 1.10


async def run(plan: Plan, json_plan: Plan) -> Report:
    default_logger_to_devnull()
    with FakeUpstream() as fake:
        async with benchmark_client() as client:
            return Report([*await _sse_rows(fake, client, plan), await _json_row(fake, client, json_plan)])


async def _sse_rows(fake: FakeUpstream, client: httpx.AsyncClient, plan: Plan) -> list[Row]:
    options = kimi_options(fake, client)
    quiet = replace(options, logger=_drop)
    first = await create_kimi_completion(PROMPT, options)
    if first.content != ANSWER or fake.violations:
        raise RuntimeError(f"unexpected adapter result {first.content!r}, violations {fake.violations}")
    sent = fake.kimi.requests[-1]
    url = f"{fake.kimi_base_url}/chat/completions"
    headers = {name: sent.headers[name] for name in ("authorization", "content-type", "accept")}

    async def bare() -> None:
        async with client.stream("POST", url, headers=headers, content=sent.raw) as response:
            response.raise_for_status()
            payloads = [json.loads(e.data) async for e in EventSource(response).aiter_sse() if e.data != "[DONE]"]
        if not payloads:
            raise RuntimeError("bare arm read no events")

    async def adapter() -> None:
        await create_kimi_completion(PROMPT, options)

    async def adapter_quiet() -> None:
        await create_kimi_completion(PROMPT, quiet)

    bare_s, adapter_s, quiet_s = await interleave([bare, adapter, adapter_quiet], plan)
    return [
        _ratio_row("1a in-process overhead, SSE (default logger → /dev/null)", adapter_s, bare_s, TARGET_RATIO),
        _ratio_row("1b in-process overhead, SSE (no-op logger)", quiet_s, bare_s, None),
    ]


async def _json_row(fake: FakeUpstream, client: httpx.AsyncClient, plan: Plan) -> Row:
    options = kimi_options(fake, client)
    reply = json.dumps(kimi_text(ANSWER).body).encode()
    fake.kimi.enqueue(raw_body(200, reply))
    first = await create_kimi_completion(PROMPT, options)
    if first.content != ANSWER:
        raise RuntimeError(f"unexpected adapter result {first.content!r}")
    sent = fake.kimi.requests[-1]
    url = f"{fake.kimi_base_url}/chat/completions"
    headers = {name: sent.headers[name] for name in ("authorization", "content-type", "accept")}

    async def bare() -> None:
        fake.kimi.enqueue(raw_body(200, reply))
        response = await client.post(url, headers=headers, content=sent.raw)
        response.raise_for_status()
        json.loads(response.content)

    async def adapter() -> None:
        fake.kimi.enqueue(raw_body(200, reply))
        await create_kimi_completion(PROMPT, options)

    bare_s, adapter_s = await interleave([bare, adapter], plan)
    return _ratio_row(
        "1c in-process overhead, JSON answer (default logger → /dev/null)", adapter_s, bare_s, TARGET_RATIO
    )


def _ratio_row(name: str, subject: list[float], baseline: list[float], target: float | None) -> Row:
    ratio = median(paired_ratios(subject, baseline))
    measured = (
        f"{ratio:.3f}x (median of {len(subject)} paired ratios; "
        f"medians {ms(median(subject))} vs bare {ms(median(baseline))})"
    )
    if target is None:
        return Row(name, measured, "— (information)", None)
    return Row(name, measured, f"≤ {target:.2f}x", ratio <= target)


def _drop(line: str) -> None:
    """A logger that drops the line."""
