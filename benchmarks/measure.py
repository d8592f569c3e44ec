"""Measuring without trusting the clock: interleaved arms, order-rotated rounds, paired statistics.

The machine is shared and noisy, so no benchmark reports an absolute time as its result. Each one
runs its subject and its baseline in the same process, alternating them round by round, and reports
a ratio or a difference. Within a round the arms run in rotated order (AB, BA, AB… for two arms;
ABC, BCA, CAB… for three), so neither arm always goes first; warm-up rounds are discarded.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

Arm = Callable[[], Awaitable[object]]
"""One iteration of an arm, timed from the outside."""
SelfTimedArm = Callable[[], Awaitable[float]]
"""One iteration of an arm that times itself (e.g. spawn → initialize, leaving shutdown out)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the results table. ``met`` is None for a figure reported without a target."""

    benchmark: str
    measured: str
    target: str
    met: bool | None


@dataclass(frozen=True, slots=True)
class Report:
    """What a benchmark hands back: its table rows, and notes printed under the table."""

    rows: list[Row]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Plan:
    """How many rounds an interleaved measurement runs, warm-up rounds first."""

    warmup: int
    rounds: int


async def interleave_self_timed(arms: Sequence[SelfTimedArm], plan: Plan) -> list[list[float]]:
    """Run every arm once per round in rotated order; return each arm's measured samples (seconds).

    Sample ``i`` of every arm comes from the same round, so samples can be paired across arms.
    """
    samples: list[list[float]] = [[] for _ in arms]
    indices = list(range(len(arms)))
    for round_number in range(plan.warmup + plan.rounds):
        shift = round_number % len(arms)
        for index in indices[shift:] + indices[:shift]:
            seconds = await arms[index]()
            if round_number >= plan.warmup:
                samples[index].append(seconds)
    return samples


async def interleave(arms: Sequence[Arm], plan: Plan) -> list[list[float]]:
    """:func:`interleave_self_timed` for arms timed from the outside with ``time.perf_counter``."""

    def timed(arm: Arm) -> SelfTimedArm:
        async def run() -> float:
            start = time.perf_counter()
            await arm()
            return time.perf_counter() - start

        return run

    return await interleave_self_timed([timed(arm) for arm in arms], plan)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile (0.5 = median), interpolating linearly between order statistics."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def paired_ratios(subject: Sequence[float], baseline: Sequence[float]) -> list[float]:
    """Subject / baseline, round by round."""
    return [s / b for s, b in zip(subject, baseline, strict=True)]


def paired_differences(subject: Sequence[float], baseline: Sequence[float]) -> list[float]:
    """Subject - baseline, round by round."""
    return [s - b for s, b in zip(subject, baseline, strict=True)]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def ms(seconds: float, *, sign: bool = False) -> str:
    """Milliseconds with a precision that suits the magnitude; ``sign`` always shows + or -."""
    value = seconds * 1000
    plus = "+" if sign else ""
    return f"{value:{plus}.2f} ms" if abs(value) < 10 else f"{value:{plus}.1f} ms"


def table(rows: Sequence[Row]) -> str:
    lines = ["| benchmark | measured | target | met? |", "|---|---|---|---|"]
    for row in rows:
        met = "—" if row.met is None else ("yes" if row.met else "**no**")
        if row.measured.startswith("CRASHED"):
            met = "**crashed**"
        lines.append(f"| {row.benchmark} | {row.measured} | {row.target} | {met} |")
    return "\n".join(lines)
