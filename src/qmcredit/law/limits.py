"""L2-L3, N.J.S.A. 52:27BBB-55(b)(3) with N.J.S.A. 54:10A-5(e): how much credit a period can take.

> The amount of the credit applied under this section against the tax imposed pursuant to section 5
> of P.L.1945, c.162 (C. 54:10A-5) for a privilege period, together with any other credits allowed
> by law, shall not exceed 50% of the tax liability otherwise due and shall not reduce the tax
> liability to an amount less than the statutory minimum provided in subsection (e) of section 5 ...

PolicyEngine's habit is kept: the floor, the cap, the room left by earlier credits and what is
applied are separate named steps, never one formula.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from decimal import Decimal

from ..money import ZERO
from .parameters import minimum_tax_parameters

CITE = "N.J.S.A. 52:27BBB-55(b)(3)"


class MinimumTaxUnknown(ValueError):
    """A CBT period gives no minimum_tax and not enough to derive it."""


@dataclass(frozen=True, slots=True)
class MinimumTax:
    amount: Decimal
    trace: dict


@lru_cache(maxsize=8192)  # a batch's periods repeat a few schedules' inputs
def minimum_tax(tax: str, year: int, given: Decimal | None, gross_receipts: Decimal | None, s_corporation: bool, group_payroll_5m: bool,
                params=None) -> MinimumTax:
    """L2 / N.J.S.A. 54:10A-5(e): the statutory minimum tax of a privilege period beginning in
    ``year``: as given, else from the schedule by New Jersey gross receipts ($2,000 for a member of
    a group with $5,000,000 of payroll), S corporations at 75% for periods beginning in 2012 on.
    The schedule is the CBT's: an insurer held to the CBT limits (L3 option) has none unless given.
    ``params``: the ``ParameterSet`` whose schedule to read (default: the parameter files)."""
    p = minimum_tax_parameters() if params is None else params.minimum_tax
    if given is not None:
        return MinimumTax(given, {"value": str(given), "source": "given in the claim"})
    if tax != "cbt":
        return MinimumTax(ZERO, {"value": str(ZERO), "source": "insurers have no CBT minimum tax"})
    sched = p.schedule_for(year)
    if sched is None:
        raise MinimumTaxUnknown(
            f"no minimum-tax schedule is recorded for privilege periods beginning in {year}; give minimum_tax"
        )
    if group_payroll_5m:
        amount, basis = sched.group_minimum, f"member of an affiliated or controlled group with total payroll of ${sched.group_payroll_threshold:,} or more"
    elif gross_receipts is not None:
        amount = next(m for lo, m in reversed(sched.brackets) if gross_receipts >= lo)
        basis = f"New Jersey gross receipts {gross_receipts}"
    else:
        raise MinimumTaxUnknown("give minimum_tax, or nj_gross_receipts (with s_corporation and group_payroll_5m) to derive it")
    trace = {"schedule_from_year": sched.from_year, "source": sched.source, "basis": basis, "schedule_amount": str(amount)}
    if s_corporation and year >= p.s_corp_from_year:
        amount = (amount * p.s_corp_share).quantize(Decimal("0.01"))
        trace["s_corporation"] = {"share": str(p.s_corp_share), "source": p.s_corp_source, "cite": p.s_corp_cite}
    trace.update({"value": str(amount), "cite": p.cite, "rule": p.rule})
    return MinimumTax(amount, trace)


@dataclass(frozen=True, slots=True)
class Room:
    """The lines of Part IV of Form 313 for one period."""

    liability: Decimal
    limited: bool                 # whether the 50% limit and the floor apply (CBT, or insurers by option)
    cap: Decimal | None           # 50% x liability
    floor: Decimal | None         # max(minimum tax, AMA)
    above_floor: Decimal | None   # liability - floor
    other_before: Decimal         # other credits applied before this one in the Director's order
    other_after: Decimal          # other credits after it (they do not reduce its room)
    room: Decimal

    def to_dict(self) -> dict:
        s = lambda v: None if v is None else str(v)  # noqa: E731
        return {
            "liability": s(self.liability), "limited": self.limited, "cap_50_percent": s(self.cap), "floor": s(self.floor),
            "liability_above_floor": s(self.above_floor), "other_credits_before": s(self.other_before),
            "other_credits_after": s(self.other_after), "room": s(self.room),
        }


def room(liability: int, limited: bool, eligible_tax: bool, floor: int, before: int, share: tuple[int, int]) -> tuple[int | None, int | None, int]:
    """L2 (b)(3): room = min(50% x liability, liability - floor) - other credits before, never
    below zero, rounded down to cents. L3: without the limits (insurers), room = liability - other
    credits before. E1: against any other tax, no room. In cents: returns the Part IV lines
    (50% cap, liability above the floor, room); the first two only where the limits apply."""
    if not eligible_tax:
        return None, None, 0
    if not limited:
        return None, None, max(liability - before, 0)
    cap = liability * share[0] // share[1]  # 50% of the liability, rounded down to cents
    above = liability - floor
    return cap, above, max(min(cap, above) - before, 0)
