"""C1-C3, N.J.S.A. 52:27BBB-55(a) and (e): new positions, the credit, the sustained effort ratio.

> ... equal to: $2,500 for each new full-time position at that location in credit year one and
> $1,250 for each new full-time position at that location in credit year two.
> New full time positions shall be measured by the increase, from the twelve-month period preceding
> credit year one to the measured credit year, in the average number of full-time positions and
> full-time position equivalents ...
> "Sustained effort ratio" means the proportion that the credit year two new full-time positions
> bears to the credit year one new full-time positions, not to exceed one.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from ..money import half_up_cents


def new_positions(average_year: Fraction, average_base: Fraction, whole_positions: bool) -> Fraction:
    """C1 (e): the year's average minus the base period's, never below zero; fractions are kept
    unless option ``whole_positions`` rounds down to whole positions."""
    rise = max(average_year - average_base, Fraction(0))
    return Fraction(rise.__floor__()) if whole_positions else rise


def credit_amount(positions: Fraction, amount_per_position: Decimal) -> Decimal:
    """C2 (a): the amount per new position (year one $2,500, year two $1,250) times the new
    positions, rounded half-up to cents."""
    return half_up_cents(Fraction(amount_per_position) * positions)


def sustained_effort_ratio(new_year_one: Fraction, new_year_two: Fraction) -> Fraction:
    """C3 (e): year two's new positions / year one's, not more than one; zero when year one has none."""
    if new_year_one <= 0:
        return Fraction(0)
    return min(new_year_two / new_year_one, Fraction(1))
