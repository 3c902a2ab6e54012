"""The lines of the Division of Taxation's Form 313 ("Economic Recovery Tax Credit") for each
privilege or reporting period, filled from a determination.

Part I qualifications, Part II qualifying employees, Part III the credit, Part IV the allowable
credit with other credits (N.J.S.A. 52:27BBB-55(b)(3)), Part V the carryover by year of origin
((b)(2), (c)). Presentation only: every figure comes from the determination.
"""

from __future__ import annotations

from .claim import Claim
from .determination import Determination
from .law.order import directors_list, place
from .law.parameters import parameter
from .money import exact_decimal, from_cents, money

ORIGIN_LABEL = {"year_one": "Credit year one", "year_two": "Credit year two"}


def _yes(b: bool) -> str:
    return "Yes" if b else "No"


def line_16(claim: Claim, index: int, others: int = 0) -> list[dict]:
    """Part IV line 16 of one period: the other credits taken before this one, by their names in
    the Director's list where they are named there (L2a), and this credit of the taxpayer's other
    locations (``others``, in cents: what they applied under the shared room, L6)."""
    p = claim.header.periods[index]
    out = []
    for c in p.other_credits:
        placed = place(c.code, c.name, c.order, claim.header.options.credit_order)
        if placed.order == "before":
            out.append({"name": placed.listed.name if placed.listed else c.name, "code": placed.listed.number if placed.listed else None,
                        "amount": money(c.amount)})
    if others:
        dl = directors_list()
        out.append({"name": f"{dl.credits[dl.this_credit - 1].name}, the taxpayer's other locations", "code": dl.this_credit,
                    "amount": money(from_cents(others))})
    return out


def _carried_in(lines, index: int) -> int | None:
    """Line 9, L4: the credit carried into period ``index`` from the periods before it, in cents:
    its own opening balances, or, while its own figures are pending (as_of), the closing balances
    of the period before, when that one is decided (they were shown as 0.00); None when not known."""
    line = lines[index]
    if not line.pending:
        return sum(o.opening for o in line.origins)
    if index == 0:
        return 0
    before = lines[index - 1]
    return None if before.pending else sum(o.closing for o in before.origins)


def form313(claim: Claim, det: Determination, of: Determination | None = None) -> list[dict]:
    """One dict per period of the claim, with the figures of Form 313 Parts I-V. ``of``: the
    several-location return ``det`` (a location's) belongs to, whose other locations' credit
    line 16 lists, so that the allowable credit is this location's under the shared room (L6)."""
    h = claim.header
    w = det.windows
    checks = {c.rule: c for c in det.checks}
    a1 = parameter("amount_year_one").at(w.year_one.start).value
    a2 = parameter("amount_year_two").at(w.year_two.start).value
    pos = lambda x: None if x is None else exact_decimal(x)  # noqa: E731
    cash = lambda x: None if x is None else money(x)  # noqa: E731
    part1 = {
        "taxpayer": h.taxpayer.name, "taxpayer_id": h.taxpayer.id, "tax": h.taxpayer.tax,
        "location": h.location.address, "municipality": h.location.municipality,
        "located_in_qualified_municipality": _yes(checks["E2"].passed),
        "receiving_uez_benefit": _yes(not checks["E3"].passed),
        "earlier_credit_period": h.taxpayer.earlier_credit_period_start or "None",
        "operations_began": h.location.operations_began.isoformat(),
        "operations_source": h.location.operations_source,
        "credit_year_one": f"{w.year_one.start} to {w.year_one.end}",
        "credit_year_two": f"{w.year_two.start} to {w.year_two.end}",
        # RULES.md open question: the form's yes/no answer, derived from the averages of subsection e.
        "new_positions_existed_before_year_one": "No" if (det.new_positions["year_one"] or 0) > 0 else "Yes",
        "eligible": _yes(det.eligible),
    }
    part2 = {
        "average_base": pos(det.averages["base"]),
        "average_year_one": pos(det.averages["year_one"]),
        "average_year_two": pos(det.averages["year_two"]),
        "new_positions_year_one": pos(det.new_positions["year_one"]),
        "new_positions_year_two": pos(det.new_positions["year_two"]),
    }
    out = []
    ledger = det.ledger
    c = lambda x: None if x is None else money(from_cents(x))  # noqa: E731
    for index, ((start, end), r, line) in enumerate(zip(ledger.dates, ledger.rooms, ledger.lines)):
        others = 0 if of is None or line.pending else of.ledger.lines[index].applied - line.applied
        shared_pending = of is not None and line.pending  # what the other locations take is not decided yet
        part3 = {
            "year_one": {"new_positions": part2["new_positions_year_one"], "amount_per_position": money(a1), "credit": cash(det.credit["year_one"])},
            "year_two": {"new_positions": part2["new_positions_year_two"], "amount_per_position": money(a2), "credit": cash(det.credit["year_two"])},
            "allowed_this_period": None if line.pending else c(line.allowed),
            "allows": list(line.allows),
            "carryover": c(_carried_in(ledger.lines, index)),
        }
        part4 = {
            "tax_liability": c(r.liability),
            "limits_apply": r.limited,
            "fifty_percent_of_liability": c(r.cap),
            "minimum_tax_floor": c(r.floor),
            "liability_less_floor": c(r.above_floor),
            "other_credits_before": c(r.other_before),
            "other_credits_after": c(r.other_after),
            "line_16": line_16(claim, index, others),
            "other_locations_credit": c(others),
            # Form 313 line 16: the credits before this one and, L6, the other locations' (not known while pending); line 17
            "line_16_total": None if shared_pending else c(r.other_before + others),
            "allowable_credit": None if shared_pending else c(max(r.room - others, 0)),
            "credit_applied": None if line.pending else c(line.applied),
        }
        part5 = [
            {"origin": o.origin, "label": ORIGIN_LABEL[o.origin], "opening": c(o.opening), "allowed": c(o.allowed),
             "applied": c(o.applied), "refund": c(o.refund), "forfeited": c(o.forfeited), "carryover": c(o.closing)}
            for o in line.origins
        ]
        out.append({
            "index": index, "start": start.isoformat(), "end": end.isoformat(), "pending": line.pending,
            "part_i": part1, "part_ii": part2, "part_iii": part3, "part_iv": part4, "part_v": part5,
            "totals": {"refund": None if line.pending else c(line.refund), "forfeited": None if line.pending else c(line.forfeited),
                       "carried_forward": None if line.pending else c(line.carried_forward)},
        })
    return out
