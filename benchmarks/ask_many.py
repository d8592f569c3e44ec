"""Benchmark 7: router_ask_many's wall time against its slowest model asked alone.

Three lean upstreams, each in a process of its own, answer after 0.1, 0.2 and 0.3 s; three
OpenAI-wire providers (kimi, deepseek, groq: registry entries, nothing special) point at them. Arms,
interleaved in-process on the loop's shared client, ledger off (``COLIBRI_STORE=off``: nothing is
written to the user's state directory):

- ask_many: one ``router_ask_many`` of the three models;
- slowest: one ``router_call`` of the 0.3 s model alone (the floor: ask_many cannot be faster);
- one after another: the three ``router_call`` in turn (what a host does without ask_many).

Reported: what ask_many adds over the slowest model (paired differences, p50 and p90), and its time
as a fraction of the sequential calls'.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

from benchmarks.measure import Plan, Report, Row, interleave, median, ms, paired_differences, paired_ratios, percentile
from benchmarks.upstream import ANSWER, PROMPT, default_logger_to_devnull, environment, lean_upstream
from colibri_router.ask_many.schema import RouterAskManyInput
from colibri_router.ask_many.service import ask_many
from colibri_router.call.service import serve
from colibri_router.providers import BUILTIN
from colibri_router.schema import RouterCallInput

LATENCIES = {"kimi": 0.1, "deepseek": 0.2, "groq": 0.3}
MODELS = {"kimi": "kimi:kimi-k2.6", "deepseek": "deepseek:deepseek-chat", "groq": "groq:llama-3.3-70b-versatile"}
TARGET_ADDED_S = 0.020


async def run(plan: Plan) -> Report:
    default_logger_to_devnull()
    async with AsyncExitStack() as stack:
        env = {"COLIBRI_STORE": "off", "COLIBRI_LOG_LEVEL": "error"}
        for name, latency in LATENCIES.items():
            upstream = await stack.enter_async_context(lean_upstream(latency))
            spec = BUILTIN[name]
            env[spec.base_url_env] = upstream.kimi_base_url
            env[spec.key_envs[0]] = f"sk-{name}-bench-0123456789"
        stack.enter_context(environment(env))
        return await _measure(plan)
    raise AssertionError("unreachable")


async def _measure(plan: Plan) -> Report:
    many = RouterAskManyInput.model_validate({"prompt": PROMPT, "models": list(MODELS.values())})
    alone = {name: RouterCallInput.model_validate({"prompt": PROMPT, "model": m}) for name, m in MODELS.items()}

    async def ask() -> None:
        result = await ask_many(many)
        if [answer.content for answer in result.answers] != [ANSWER] * len(MODELS):
            raise RuntimeError(f"unexpected answers: {result.answers}")

    async def slowest() -> None:
        await serve(alone["groq"])

    async def in_turn() -> None:
        for call in alone.values():
            await serve(call)

    asked, floor, sequential = await interleave([ask, slowest, in_turn], plan)
    added = paired_differences(asked, floor)
    fraction = median(paired_ratios(asked, sequential))
    return Report(
        [
            Row(
                "7 router_ask_many of 3 models (0.1/0.2/0.3 s) vs the slowest alone: added",
                f"{ms(percentile(added, 0.5), sign=True)} at p50, {ms(percentile(added, 0.9), sign=True)} at p90 "
                f"({plan.rounds} paired rounds; medians {ms(median(asked))} vs {ms(median(floor))} alone)",
                f"p50 < {ms(TARGET_ADDED_S)}",
                percentile(added, 0.5) < TARGET_ADDED_S,
            ),
            Row(
                "7 router_ask_many vs the same 3 router_calls one after another",
                f"{fraction:.2f}x (median of {plan.rounds} paired ratios; medians {ms(median(asked))} vs "
                f"{ms(median(sequential))})",
                "— (information)",
                None,
            ),
        ]
    )
