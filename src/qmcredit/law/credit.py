"""C1-C3, N.J.S.A. 52:27BBB-55(a) and (e): new positions, the credit, the sustained effort ratio.

> ... equal to: $2,500 for each new full-time position at that location in credit year one and
> $1,250 for each new full-time position at that location in credit year two.
> New full time positions shall be measured by the increase, from the twelve-month period preceding
> credit year one to the measured credit year, in the average number of full-time positions and
> full-time position equivalents ...
> "Sustained effort ratio" means the proportion that the credit year two new full-time positions
> bears to the credit year one new full-time positions, not to exceed one.

Exact whole numbers: a count of positions is a numerator over its claim's denominator ``den``
(``law.positions.average_denominator``); money is in cents. Python integers never overflow.
"""

from __future__ import annotations

from .rule import rule

CITE = "N.J.S.A. 52:27BBB-55(e)"


@rule("C1", CITE, "the rise of the year's average over the base period's, not below zero")
def new_positions(year: int | None, base: int | None, den: int, whole_positions: bool) -> int | None:
    """C1 (e): the year's average minus the base period's, never below zero (numerators over
    ``den``); with option ``whole_positions``, rounded down to whole positions. None while either
    average is not known."""
    if year is None or base is None:
        return None
    rise = max(year - base, 0)
    return rise // den * den if whole_positions else rise


@rule("C2", "N.J.S.A. 52:27BBB-55(a)", "${amount} for each new full-time position, rounded half-up to cents")
def potential_credit(new: int | None, den: int, amount_cents: int, eligible: bool) -> int | None:
    """C2 (a), E5: a credit year's credit; zero when the claim is not eligible (E5); None while its
    new positions are not known."""
    if new is None:
        return None
    return credit_cents(new, den, amount_cents) if eligible else 0


NOT_ELIGIBLE = "; zero: the claim is not eligible (E5)"
WHOLE_POSITIONS = ", rounded down to whole positions"


def credit_cents(new: int, den: int, amount_cents: int) -> int:
    """C2 (a): the amount per new position (year one $2,500, year two $1,250) times the new
    positions (``new`` / ``den``), rounded half-up to cents."""
    return (2 * amount_cents * new + den) // (2 * den)


@rule("C3", CITE, "year two's new positions / year one's, at most one; zero when year one has none")
def sustained_effort_ratio(new_one: int | None, new_two: int | None) -> tuple[int, int] | None:
    """C3 (e): year two's new positions / year one's, not more than one; zero when year one has
    none. As (numerator, denominator); None while either year is not known."""
    if new_one is None or new_two is None:
        return None
    if new_one <= 0:
        return 0, 1
    return min(new_two, new_one), new_one
