"""Exact money and ratio arithmetic: Decimal and Fraction only, rounding only where RULES.md says."""

from __future__ import annotations

from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from fractions import Fraction

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def half_up_cents(x: Fraction | Decimal) -> Decimal:
    """Round to cents, half-up (C2, R1)."""
    if isinstance(x, Fraction):
        cents = (x * 100 + Fraction(1, 2)).__floor__() if x >= 0 else -((-x * 100 + Fraction(1, 2)).__floor__())
        return (Decimal(cents) / 100).quantize(CENT)
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


def floor_cents(x: Fraction | Decimal) -> Decimal:
    """Round down to cents (L2: room is rounded down)."""
    if isinstance(x, Fraction):
        return (Decimal((x * 100).__floor__()) / 100).quantize(CENT)
    return x.quantize(CENT, rounding=ROUND_FLOOR)


def money(x: Decimal) -> str:
    return str(x.quantize(CENT))


def exact_decimal(x: Fraction, places: int = 6) -> str:
    """A position count or ratio as a decimal string: every digit when it terminates (at least
    `places` decimals), else rounded half-up to `places` decimals (FORMAT.md)."""
    d, twos, fives = x.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    k = max(twos, fives, places) if d == 1 else places
    # |x| x 10^k in whole numbers: exact when x terminates within k places, else half-up
    num, den = abs(x.numerator) * 10**k, x.denominator
    digits = num // den if d == 1 else (2 * num + den) // (2 * den)
    sign = "-" if x < 0 and digits else ""
    whole, frac = divmod(digits, 10**k)
    return f"{sign}{whole}.{str(frac).rjust(k, '0')}"


def fraction_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
