"""L1, L4, L5 and R1-R3, N.J.S.A. 52:27BBB-55(b) and (c): when the credit is allowed, how it is
used, carried forward, forfeited and refunded across the taxpayer's periods.

> b.(1) The credit ... for credit year one shall be allowed for the privilege period or reporting
> period in which or with which credit year one ends; ... for credit year two ... in which or with
> which credit year two ends.
> (2) An unused credit may be carried forward, if necessary, for use in the privilege periods or
> reporting periods following the privilege period or reporting period for which the credit is allowed.
> c.(2) That amount of the credit received for credit year one remaining, if any, after the
> liabilities for the privilege period or reporting period in which or with which credit year two
> ends and for any prior period have been satisfied, multiplied by the sustained effort ratio,
> shall be an overpayment ...; that amount ... that is not an overpayment ... may be carried forward.

``run`` works in whole cents; ``Ledger``, ``PeriodLine`` and ``OriginLine`` are its lines in
dollars, as a determination presents them (Form 313 Parts IV and V).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import NamedTuple

from .limits import Room

ORIGINS = ("year_one", "year_two")


def period_of_allowance(ends: date, periods: list[tuple[date, date]]) -> int | None:
    """L1 (b)(1): the period whose dates contain the last day of the credit year ("in which or with
    which" it ends); None when that period is not among those given."""
    for i, (start, end) in enumerate(periods):
        if start <= ends <= end:
            return i
    return None


def year_one_period_missing(allowed_in: tuple[int | None, int | None], credits: tuple[int | None, int | None]) -> bool:
    """V2: credit year one's period of allowance is not among the periods given while year two's
    is (so it came before the first one given), and year one has a credit (or one not known yet):
    the year-one balance entering the periods given is unknown, and with it every application,
    the refund (R1) and what is carried; never silently zero."""
    return allowed_in[0] is None and allowed_in[1] is not None and credits[0] != 0


class Line(NamedTuple):
    """One period of the ledger, in cents. ``origins``: (year of origin, opening, allowed, applied,
    refund, forfeited, closing) of each balance open in the period (Form 313 Part V)."""

    allows: tuple[str, ...]
    pending: bool
    allowed: int
    applied: int
    refund: int
    forfeited: int
    carried_forward: int
    origins: tuple[tuple[str, int, int, int, int, int, int], ...]


def run(
    rooms: list[int],
    allowed_in: tuple[int | None, int | None],
    credits: tuple[int | None, int | None],
    ratio: tuple[int, int] | None,
    carryforward_periods: int | None,
    take_refund: bool,
) -> tuple[tuple[Line, ...], int | None]:
    """Apply the credits period by period (L4: year one's balance before year two's), refund at the
    close of year two's period (R1-R3), forfeit what outlives the carryforward limit (L5). In cents.

    ``rooms``: each period's room (L2-L3), in date order; ``allowed_in``: the period of allowance of
    each credit year (L1); ``credits``: each year's credit (C2), None while not known (months after
    ``as_of``): the periods from the first one such a credit would enter are left undecided.
    Returns the lines and that first undecided period."""
    pending_from = min((p for p, c in zip(allowed_in, credits) if c is None and p is not None), default=None)
    if year_one_period_missing(allowed_in, credits):  # V2: undecided from the first period given
        pending_from = 0
    ratio_num, ratio_den = ratio if ratio is not None else (0, 1)
    balance = [0, 0]
    open_ = [False, False]
    lines = []
    allows_in: dict[int, tuple[str, ...]] = {}  # period -> the credit years allowed in it (L1)
    for o in (0, 1):
        if allowed_in[o] is not None:
            allows_in[allowed_in[o]] = allows_in.get(allowed_in[o], ()) + (ORIGINS[o],)
    for i, rm in enumerate(rooms):
        allows = allows_in.get(i, ())
        if pending_from is not None and i >= pending_from:
            lines.append(Line(allows, True, 0, 0, 0, 0, 0, ()))
            continue
        if not allows and not (open_[0] or open_[1]):  # no balance open and none allowed: nothing moves
            lines.append(Line((), False, 0, 0, 0, 0, balance[0] + balance[1], ()))
            continue
        opening = [balance[o] if open_[o] else 0 for o in (0, 1)]
        allowed = [0, 0]
        for o in (0, 1):  # L1: allowed for the period in which or with which the credit year ends
            if allowed_in[o] == i:
                allowed[o] = balance[o] = credits[o] or 0
                open_[o] = True
        # L4 (b)(2): the older balance (year one's) first, up to the room of L2/L3.
        left, applied = rm, [0, 0]
        for o in (0, 1):
            if open_[o]:
                applied[o] = min(balance[o], left)
                balance[o] -= applied[o]
                left -= applied[o]
        # R1 (c)(2): at the close of year two's period, year one's balance x the ratio is an
        # overpayment, rounded half-up to cents (R3: unless the refund is not taken).
        refund = 0
        if allowed_in[1] == i and take_refund and open_[0]:
            refund = min((2 * balance[0] * ratio_num + ratio_den) // (2 * ratio_den), balance[0])
            balance[0] -= refund
        # L5: what is left after the last period of use is forfeited.
        forfeited = [0, 0]
        for o in (0, 1):
            if open_[o] and carryforward_periods is not None and i >= allowed_in[o] + carryforward_periods:
                forfeited[o], balance[o] = balance[o], 0
        origins = tuple(
            (ORIGINS[o], opening[o], allowed[o], applied[o], refund if o == 0 else 0, forfeited[o], balance[o])
            for o in (0, 1) if open_[o]
        )
        for o in (0, 1):  # a balance used up leaves the ledger
            open_[o] = open_[o] and balance[o] > 0
        lines.append(Line(allows, False, sum(allowed), sum(applied), refund, sum(forfeited), balance[0] + balance[1], origins))
    return tuple(lines), pending_from


@dataclass(frozen=True, slots=True)
class OriginLine:
    """Part V of Form 313: one year of origin's movement in one period."""

    origin: str
    opening: Decimal
    allowed: Decimal
    applied: Decimal
    refund: Decimal
    forfeited: Decimal
    closing: Decimal

    def to_dict(self) -> dict:
        return {k: str(getattr(self, k)) for k in ("opening", "allowed", "applied", "refund", "forfeited", "closing")}


@dataclass(frozen=True, slots=True)
class PeriodLine:
    index: int
    start: date
    end: date
    room: Room
    allowed: Decimal
    applied: Decimal
    refund: Decimal
    forfeited: Decimal
    carried_forward: Decimal
    origins: tuple[OriginLine, ...] = field(default=())
    pending: bool = False
    allows: tuple[str, ...] = ()  # which credit years end in this period


@dataclass(frozen=True, slots=True)
class Ledger:
    periods: tuple[PeriodLine, ...]
    refund: Decimal
    carried_forward: Decimal
    not_yet_applied: dict  # origin -> {"amount", "allowed_for": the day whose period is not given}
    pending_from: int | None


