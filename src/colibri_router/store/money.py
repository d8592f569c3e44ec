"""Money in the store is integer micro-dollars: sums of many small costs stay exact, and the same
number comes back from every backend (floats would drift by a rounding error per row).

Conversion rule, both directions documented here and nowhere else:

- :func:`usd_to_micro` takes the amount's shortest decimal form (what ``repr`` prints for a float;
  a :class:`~decimal.Decimal` as it is) and rounds it to a whole micro-dollar, **half up** (ties
  away from zero): ``0.0000015`` → ``2``, ``0.0000014999`` → ``1``, ``-0.0000015`` → ``-2``.
  Reading the float's decimal form, not its binary value, is what makes ``0.0000015`` a tie:
  its nearest double is slightly below 1.5e-6, and rounding that would surprise anyone reading it.
- :func:`micro_to_usd` divides by one million; ``usd_to_micro(micro_to_usd(n)) == n`` for every
  amount below a billion dollars.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

MICRO_PER_USD = 1_000_000
_ONE_MICRO = Decimal("0.000001")


def usd_to_micro(usd: float | Decimal) -> int:
    """Whole micro-dollars in ``usd``, rounded half up; NaN and infinities are a ``ValueError``."""
    amount = usd if isinstance(usd, Decimal) else Decimal(repr(float(usd)))
    if not amount.is_finite():
        raise ValueError(f"a cost must be a finite amount, got {usd!r}")
    return int(amount.quantize(_ONE_MICRO, rounding=ROUND_HALF_UP).scaleb(6))


def micro_to_usd(micro: int) -> float:
    return micro / MICRO_PER_USD


def format_usd(micro: int) -> str:
    """``$12.50``, ``$0.0015``: cents always shown, further digits only when they are not zero."""
    sign = "-" if micro < 0 else ""
    dollars, fraction = divmod(abs(micro), MICRO_PER_USD)
    digits = f"{fraction:06d}".rstrip("0").ljust(2, "0")
    return f"{sign}${dollars}.{digits}"
