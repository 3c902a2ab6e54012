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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction

from ..money import ZERO, half_up_cents
from .limits import Room

ORIGINS = ("year_one", "year_two")


def period_of_allowance(ends: date, periods: list[tuple[date, date]]) -> int | None:
    """L1 (b)(1): the period whose dates contain the last day of the credit year ("in which or with
    which" it ends); None when that period is not among those given."""
    for i, (start, end) in enumerate(periods):
        if start <= ends <= end:
            return i
    return None


@dataclass
class _Lot:
    origin: str
    allowed_in: int
    amount: Decimal
    remaining: Decimal


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


def run(
    rooms: list[Room],
    period_dates: list[tuple[date, date]],
    credits: dict[str, Decimal],
    year_ends: dict[str, date],
    ratio: Fraction,
    carryforward_periods: int | None,
    take_refund: bool,
    pending: set[str],
) -> Ledger:
    """Apply the credits period by period (L4: year one's balance before year two's), refund at the
    close of year two's period (R1-R3), forfeit what outlives the carryforward limit (L5).

    ``pending``: the credit years whose amount is not known yet (months after ``as_of``); the
    periods from the first one they would enter are left undecided."""
    allowed_in = {o: period_of_allowance(year_ends[o], period_dates) for o in ORIGINS}
    pending_from = min((allowed_in[o] for o in pending if allowed_in[o] is not None), default=None)
    lots: list[_Lot] = []
    lines: list[PeriodLine] = []
    refund_total = ZERO
    for i, (start, end) in enumerate(period_dates):
        rm = rooms[i]
        allows = tuple(o for o in ORIGINS if allowed_in[o] == i)
        if pending_from is not None and i >= pending_from:
            lines.append(PeriodLine(i, start, end, rm, ZERO, ZERO, ZERO, ZERO, ZERO, (), True, allows))
            continue
        opening = {lot.origin: lot.remaining for lot in lots}
        for o in allows:  # L1: allowed for the period in which or with which the credit year ends
            lots.append(_Lot(o, i, credits[o], credits[o]))
        lots.sort(key=lambda lot: (lot.allowed_in, ORIGINS.index(lot.origin)))
        # L4 (b)(2): use the older balance first, up to the room of L2/L3.
        left = rm.room
        used: dict[str, Decimal] = {}
        for lot in lots:
            take = min(lot.remaining, left)
            lot.remaining -= take
            left -= take
            used[lot.origin] = take
        # R1 (c)(2): at the close of year two's period, year one's remaining balance x the ratio is an overpayment.
        refunds: dict[str, Decimal] = {}
        if allowed_in["year_two"] == i and take_refund:
            for lot in lots:
                if lot.origin == "year_one":
                    r = min(half_up_cents(Fraction(lot.remaining) * ratio), lot.remaining)
                    lot.remaining -= r
                    refunds["year_one"] = r
        # L5: what is left after the last period of use is forfeited.
        forfeits: dict[str, Decimal] = {}
        for lot in lots:
            if carryforward_periods is not None and i >= lot.allowed_in + carryforward_periods and lot.remaining > 0:
                forfeits[lot.origin] = lot.remaining
                lot.remaining = ZERO
        origins = tuple(
            OriginLine(
                lot.origin, opening.get(lot.origin, ZERO), credits[lot.origin] if lot.allowed_in == i else ZERO,
                used.get(lot.origin, ZERO), refunds.get(lot.origin, ZERO), forfeits.get(lot.origin, ZERO), lot.remaining,
            )
            for lot in lots
        )
        lots = [lot for lot in lots if lot.remaining > 0]
        refund_total += sum(refunds.values(), ZERO)
        lines.append(PeriodLine(
            i, start, end, rm,
            allowed=sum((credits[o] for o in allows), ZERO),
            applied=sum(used.values(), ZERO),
            refund=sum(refunds.values(), ZERO),
            forfeited=sum(forfeits.values(), ZERO),
            carried_forward=sum((lot.remaining for lot in lots), ZERO),
            origins=origins, allows=allows,
        ))
    not_yet = {
        o: {"amount": str(credits[o]), "allowed_for_period_containing": year_ends[o].isoformat()}
        for o in ORIGINS
        if allowed_in[o] is None and o not in pending and credits[o] > 0
    }
    carried = sum((lot.remaining for lot in lots), ZERO)
    return Ledger(tuple(lines), refund_total, carried, not_yet, pending_from)
