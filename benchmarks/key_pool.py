"""Benchmark 15: what a pool of three keys costs a ``router_call`` over one key, in process.

Arms, interleaved against the lean upstream (its own process) at latency 0, each a whole
:func:`colibri_router.router.route` with ``COLIBRI_STORE=off`` on one ``httpx.AsyncClient``:

- one key: ``COLIBRI_KIMI_API_KEY`` holds one key;
- pool of 3: it holds three, comma-separated: each call takes the next in turn (docs/keys.md);
- one key again: the first arm repeated, so the table shows what two identical arms differ by (the
  run's noise), next to the pool's ratio.

The variable is set by each arm before its call (the router reads it per call, as a host's change
would be read).
"""

from __future__ import annotations

import os

from benchmarks.measure import Plan, Report, Row, interleave, median, ms, paired_ratios
from benchmarks.upstream import (
    ANSWER,
    KIMI_KEY,
    PROMPT,
    benchmark_client,
    default_logger_to_devnull,
    environment,
    lean_upstream,
)
from colibri_router.engine.keys import reset_pools
from colibri_router.router import route
from colibri_router.router.call import call_from
from colibri_router.schema import RouterCallInput

KEY_VARIABLE = "COLIBRI_KIMI_API_KEY"
ONE = KIMI_KEY
THREE = ",".join(f"{KIMI_KEY}-{n}" for n in range(3))
TARGET_RATIO = 1.05


async def run(plan: Plan) -> Report:
    default_logger_to_devnull()
    reset_pools()
    args = call_from(RouterCallInput.model_validate({"prompt": PROMPT, "provider": "kimi"}))
    async with lean_upstream() as upstream, benchmark_client() as client:
        with environment({"COLIBRI_KIMI_BASE_URL": upstream.kimi_base_url, "COLIBRI_STORE": "off", KEY_VARIABLE: ONE}):

            async def call(keys: str) -> None:
                os.environ[KEY_VARIABLE] = keys
                result = (await route(args, client=client)).result
                if result.content != ANSWER:
                    raise RuntimeError(f"unexpected answer {result.content!r}")

            async def one() -> None:
                await call(ONE)

            async def pool() -> None:
                await call(THREE)

            one_s, pool_s, again_s = await interleave([one, pool, one], plan)
    reset_pools()
    ratio = median(paired_ratios(pool_s, one_s))
    noise = median(paired_ratios(again_s, one_s))
    measured = (
        f"{ratio:.3f}x (median of {len(pool_s)} paired ratios; medians {ms(median(pool_s))} vs one key "
        f"{ms(median(one_s))}; one key vs itself {noise:.3f}x)"
    )
    return Report(
        [
            Row(
                "15 key pool of 3 vs one key, router_call in process",
                measured,
                f"≤ {TARGET_RATIO:.2f}x",
                ratio <= TARGET_RATIO,
            )
        ]
    )
