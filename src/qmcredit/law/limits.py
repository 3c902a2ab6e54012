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
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from ..money import ZERO, cents, cents_text
from .parameters import minimum_tax_parameters
from .rule import rule

CITE = "N.J.S.A. 52:27BBB-55(b)(3)"


class MinimumTaxUnknown(ValueError):
    """A CBT period gives no minimum_tax and not enough to derive it."""


@dataclass(frozen=True, slots=True)
class MinimumTax:
    amount: Decimal
    trace: dict


def months_touched(start: date, end: date) -> int:
    """The calendar months a period touches, first and last included."""
    return (end.year - start.year) * 12 + end.month - start.month + 1


def group_payroll_test(start: date, end: date, group_payroll_5m: bool, group_payroll: Decimal | None) -> tuple[bool, str | None]:
    """L2c: whether the taxpayer is a member of a group with total payroll of $5,000,000 or more:
    ``group_payroll`` decides when given (a period touching fewer than 12 calendar months: more
    than $416,667 per month touched, Form 313-A), else ``group_payroll_5m``. Returns the answer
    and the reading (None when not a member)."""
    p = minimum_tax_parameters()
    sched = p.schedule_for(start.year) or p.schedules[0]
    if group_payroll is None:
        return group_payroll_5m, "group_payroll_5m given" if group_payroll_5m else None
    n = months_touched(start, end)
    if n < 12:
        monthly = p.short_period["monthly_payroll_threshold"]
        ok = group_payroll > monthly * n
        return ok, (f"group payroll {group_payroll} over {n} calendar months touched is more than ${monthly:,} a month (short period, Form 313-A)"
                    if ok else None)
    ok = group_payroll >= sched.group_payroll_threshold
    return ok, f"group payroll {group_payroll} is ${sched.group_payroll_threshold:,} or more" if ok else None


def ama_allowed(tax: str, start: date, s_corporation: bool) -> bool:
    """L2b: an alternative minimum assessment floors the tax only for CBT privilege periods
    beginning in 2002 to 2006, never for a New Jersey S corporation or an insurer."""
    a = minimum_tax_parameters().ama
    return tax == "cbt" and not s_corporation and a["from_year"] <= start.year <= a["to_year"]


def ama_problem(tax: str, start: date, s_corporation: bool, ama: Decimal | None) -> str | None:
    """L2b: why a non-zero AMA given for a period is refused, or None (zero is always accepted)."""
    if ama is None or ama == 0 or ama_allowed(tax, start, s_corporation):
        return None
    a = minimum_tax_parameters().ama
    why = ("an insurer has no AMA" if tax == "insurance_premiums" else f"the AMA is a Corporation Business Tax assessment (tax is {tax!r})" if tax != "cbt"
           else "a New Jersey S corporation has no AMA (N.J.A.C. 18:7-18.3)" if s_corporation
           else f"the AMA applies only to privilege periods beginning in {a['from_year']} to {a['to_year']} (it is $0 for this period, which begins {start})")
    return f"{ama} is refused (L2b, {a['cite']}): {why}; give 0 or leave it out"


def minimum_tax(
    tax: str, start: date, end: date, given: Decimal | None, gross_receipts: Decimal | None, s_corporation: bool,
    group_payroll_5m: bool, group_payroll: Decimal | None = None, combined_group_member: bool = False, s_corporation_group_minimum: str = "reduced",
    params=None,
) -> MinimumTax:
    """L2 / L2c, N.J.S.A. 54:10A-5(e): the statutory minimum tax of a privilege period: as given,
    else from the schedule of the year it begins by New Jersey gross receipts; $2,000 for a member
    of a group with $5,000,000 of payroll (``group_payroll_test``) or of a combined group for
    periods ending on or after 2019-07-31 (P.L.2018, c.131); New Jersey S corporations at 75% for
    periods beginning in 2012 on, the group minimum too unless ``s_corporation_group_minimum`` is
    "full". The schedule is the CBT's: an insurer held to the CBT limits (L3 option) has none
    unless given. ``params``: the ``ParameterSet`` whose schedule to read (default: the parameter
    files). Raises ``MinimumTaxUnknown`` when it can be neither read nor derived."""
    if given is not None:
        return _given(given)
    if tax != "cbt":
        return _NO_CBT_MINIMUM
    return _scheduled(start, end, gross_receipts, s_corporation, group_payroll_5m, group_payroll, combined_group_member,
                      s_corporation_group_minimum, params)


@lru_cache(maxsize=1024)  # a batch's given minimum taxes are a few amounts
def _given(given: Decimal) -> MinimumTax:
    return MinimumTax(given, {"value": str(given), "source": "given in the claim"})


_NO_CBT_MINIMUM = MinimumTax(ZERO, {"value": str(ZERO), "source": "insurers have no CBT minimum tax"})


@lru_cache(maxsize=8192)  # a batch's periods repeat a few schedules' inputs
def _scheduled(start: date, end: date, gross_receipts: Decimal | None, s_corporation: bool, group_payroll_5m: bool, group_payroll: Decimal | None,
               combined_group_member: bool, s_corporation_group_minimum: str, params) -> MinimumTax:
    """``minimum_tax`` of a CBT period that does not give it: from the schedule."""
    p = minimum_tax_parameters() if params is None else params.minimum_tax
    year = start.year
    sched = p.schedule_for(year)
    if sched is None:
        raise MinimumTaxUnknown(
            f"no minimum-tax schedule is recorded for privilege periods beginning in {year}; give minimum_tax"
        )
    member, group_basis = group_payroll_test(start, end, group_payroll_5m, group_payroll)
    combined = combined_group_member and end >= p.combined_group["periods_ending_from"]
    group = member or combined
    if member:
        amount, basis = sched.group_minimum, f"member of an affiliated or controlled group with total payroll of ${sched.group_payroll_threshold:,} or more: {group_basis}"
    elif combined:
        amount = p.combined_group["minimum"]
        basis = f"member of a combined group filing a New Jersey combined return, period ending on or after {p.combined_group['periods_ending_from']} ({p.combined_group['source']})"
    elif gross_receipts is not None:
        amount = next(m for lo, m in reversed(sched.brackets) if gross_receipts >= lo)
        basis = f"New Jersey gross receipts {gross_receipts}"
    else:
        raise MinimumTaxUnknown(
            "give minimum_tax, or nj_gross_receipts (with s_corporation, group_payroll or group_payroll_5m, combined_group_member) to derive it (L2c)")
    trace = {"schedule_from_year": sched.from_year, "source": sched.source, "basis": basis, "schedule_amount": str(amount), "rule": "L2c"}
    if s_corporation and year >= p.s_corp_from_year:
        if group and s_corporation_group_minimum == "full":
            trace["s_corporation"] = {"share": "1", "reading": "option s_corporation_group_minimum = \"full\": the group minimum is not reduced"}
        else:
            amount = (amount * p.s_corp_share).quantize(Decimal("0.01"))
            trace["s_corporation"] = {"share": str(p.s_corp_share), "source": p.s_corp_source, "cite": p.s_corp_cite}
    trace.update({"value": str(amount), "cite": p.cite})
    return MinimumTax(amount, trace)


class Room(NamedTuple):
    """The lines of Part IV of Form 313 for one period of the return, in cents (L2-L3)."""

    liability: int
    limited: bool                 # whether the 50% limit and the floor apply (CBT, or insurers by option)
    cap: int | None               # 50% x liability
    floor: int | None             # max(minimum tax, AMA)
    above_floor: int | None       # liability - floor
    other_before: int             # other credits applied before this one in the Director's order
    other_after: int              # other credits after it (they do not reduce its room)
    room: int

    def to_dict(self) -> dict:
        s = lambda v: None if v is None else cents_text(v)  # noqa: E731
        return {
            "liability": s(self.liability), "limited": self.limited, "cap_50_percent": s(self.cap), "floor": s(self.floor),
            "liability_above_floor": s(self.above_floor), "other_credits_before": s(self.other_before),
            "other_credits_after": s(self.other_after), "room": s(self.room),
        }


@rule("L3", CITE, "the 50% limit and the minimum-tax floor are the CBT's; insurers have neither unless option insurer_limits = \"cbt\"")
def limited(tax: str, insurer_limits: str) -> bool:
    """L2-L3: whether the 50% limit and the floor apply to the period's tax."""
    return tax == "cbt" or (tax == "insurance_premiums" and insurer_limits == "cbt")


@rule("L2", "N.J.S.A. 52:27BBB-55(b)(3); N.J.A.C. 18:7-3.17(c)", "the tax may not go below the larger of the minimum tax and the alternative minimum assessment")
@lru_cache(maxsize=8192)  # a batch's periods repeat a few minimum taxes (and most give no AMA)
def floor(minimum_tax: Decimal, ama: Decimal | None) -> int:
    """L2: the floor, in cents: max(minimum tax, AMA)."""
    return cents(minimum_tax if ama is None or minimum_tax >= ama else ama)


ROOM_LIMITED = "min(50% of liability, liability - max(minimum tax, AMA)) - other credits before this one, not below zero, rounded down to cents"
ROOM_UNLIMITED = "liability - other credits before this one, not below zero (no 50% limit or floor for this tax)"


@rule("L2", CITE, ROOM_LIMITED)
def room(liability: int, limited: bool, eligible_tax: bool, floor: int, before: int, after: int, share: tuple[int, int]) -> Room:
    """L2 (b)(3): room = min(50% x liability, liability - floor) - other credits before, never
    below zero, rounded down to cents. L3: without the limits (insurers), room = liability - other
    credits before. E1: against any other tax, no room. In cents, as the lines of Part IV."""
    if not eligible_tax:
        return _new(Room, (liability, False, None, None, None, before, after, 0))
    if not limited:
        return _new(Room, (liability, False, None, None, None, before, after, max(liability - before, 0)))
    cap = liability * share[0] // share[1]  # 50% of the liability, rounded down to cents
    above = liability - floor
    return _new(Room, (liability, True, cap, floor, above, before, after, max(min(cap, above) - before, 0)))


_new = tuple.__new__  # a Room made without the Python frame of its __new__ (a batch makes millions)
