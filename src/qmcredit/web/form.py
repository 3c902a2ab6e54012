"""The figures of Form 313 ("Economic Recovery Tax Credit", N.J. Division of Taxation) for one
privilege period, read from the claim and its determination.

The form's Parts: I qualifications (N.J.S.A. 52:27BBB-55(a), (d) and the definitions of (e)),
II qualifying employees, III the credit ((a): $2,500 and $1,250 per new full-time position),
IV the allowable amount with the other credits ((b)(3), N.J.A.C. 18:7-3.17), V the carryover by
year of origin ((b)(2), (c)(2); five years under the form's instructions). Every amount is the
determination's string; the only arithmetic is Decimal addition and comparison of those strings
where a form line totals or compares others (line 10, line 15).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ..money import money
from .figures import PERIOD_LABELS, as_dict, shown

ORIGIN_LABELS = {"year_one": "Credit year one", "year_two": "Credit year two"}
TAX_NAMES = {"cbt": "Corporation Business Tax", "insurance_premiums": "Tax on Insurers (Insurance Premiums Tax)"}
COUNTED = ("full_time", "part_time_equivalent")


@dataclass(frozen=True)
class FormLine:
    no: str
    text: str
    value: str = ""


@dataclass(frozen=True)
class Part:
    number: str
    title: str
    lines: tuple[FormLine, ...] = ()
    table: tuple[tuple[str, ...], ...] = ()  # header row first; empty when the part has none
    note: str = ""


@dataclass(frozen=True)
class Form313:
    tax: str
    taxpayer_name: str
    taxpayer_id: str
    period: str
    eligible: bool
    ineligible_because: tuple[str, ...]
    parts: tuple[Part, ...] = field(default=())


def _yes_no(flag: bool) -> str:
    return "YES" if flag else "NO"


def _total(*amounts: str | None) -> str:
    return str(sum((Decimal(a) for a in amounts if a is not None), Decimal("0.00")))


def _employee_rows(d: dict) -> list[dict]:
    em = next((e for e in d.get("explanation", []) if e.get("figure") == "employee_months"), None)
    return [] if em is None else em["rows"]


def part_one(claim, d: dict) -> Part:
    """Part I: the form's preliminary questions, answered from the claim and the payroll (E3, P1, P2;
    new positions are measured by the averages of subsection e.), with questions 5 and 6."""
    rows = _employee_rows(d)
    statuses = {r["status"] for r in rows}
    loc = claim.header.location
    checks = tuple((c["rule"], c["cite"], c["condition"], "passed" if c["passed"] else "FAILED", c["message"]) for c in d.get("checks", []))
    return Part("I", "Taxpayer and Employee Preliminary Qualifications", (
        FormLine("1", "Is the taxpayer receiving a benefit under the New Jersey Urban Enterprise Zones Act?", _yes_no(claim.taxpayer.uez_benefit)),
        FormLine("2", "Did the new full-time positions at the qualifying location exist prior to credit year one? "
                      "(measured as the increase of the average over the base period, 52:27BBB-55(e))", "NO"),
        FormLine("3", "Is a full-time position counted here filled on a temporary or seasonal basis? (P2: such hours "
                      "are never counted as full-time" + ("; some were recorded and excluded)" if "temporary_not_part_time" in statuses
                                                          or "temporary_excluded" in statuses else ")"), "NO"),
        FormLine("4", "Is an employee counted here an owner, or an owner's spouse, dependant, ancestor or descendant? "
                      "(P1: their hours count nowhere" + ("; some were recorded and excluded)" if statuses & {"owner", "owner_relative"} else ")"), "NO"),
        FormLine("5", "Address of the qualifying location of the new or expanded operations", f"{loc.address}, {loc.municipality}".strip(", ")),
        FormLine("6", "Date the new or expanded operations began at the qualifying location"
                      + (f" (source: {loc.operations_source})" if loc.operations_source else ""), loc.operations_began.isoformat()),
    ), (("Rule", "Cite", "Condition", "Result", "Why"), *checks) if checks else ())


def part_two(d: dict) -> Part:
    """Part II: each employee whose hours count in a credit year (P2 full-time or P4 equivalents),
    with the first and last month counted."""
    spans: dict[str, list] = {}
    for r in _employee_rows(d):
        if r["status"] in COUNTED and r["period"] in ("year_one", "year_two"):
            s = spans.setdefault(r["employee_id"], [r["month"], r["month"], 0, 0])
            s[0], s[1] = min(s[0], r["month"]), max(s[1], r["month"])
            s[2 if r["status"] == "full_time" else 3] += 1
    table = (("Employee", "From", "To", "Months full-time", "Months part-time (equivalents)"),
             *((e, a, b, str(ft), str(pt)) for e, (a, b, ft, pt) in sorted(spans.items())))
    return Part("II", "Qualifying Employee Information", table=table,
                note="Employees whose hours count toward the positions of credit year one or two (rules P2, P4).")


def part_three(d: dict, p: dict) -> Part:
    """Part III: the credits of subsection a. and what this period has available (L1, L4)."""
    detail = p.get("detail", {})
    origins = detail.get("origins", {})
    avgs, new, credit = d["average_positions"], d["new_positions"], d["credit"]
    carry = {o: v["opening"] for o, v in origins.items() if o not in detail.get("allows", [])}
    allowed = p.get("allowed")
    lines = [
        FormLine("7a", f"Average positions, base period {d['windows']['base']['start']} to {d['windows']['base']['end']}", shown(avgs["base"])),
        FormLine("7b", f"Average positions, credit year one {d['windows']['year_one']['start']} to {d['windows']['year_one']['end']}", shown(avgs["year_one"])),
        FormLine("7", f"New full-time positions in credit year one: {shown(new['year_one'])} x $2,500", shown(credit["year_one"])),
        FormLine("8a", f"Average positions, credit year two {d['windows']['year_two']['start']} to {d['windows']['year_two']['end']}", shown(avgs["year_two"])),
        FormLine("8", f"New full-time positions in credit year two: {shown(new['year_two'])} x $1,250", shown(credit["year_two"])),
        FormLine("8b", "Sustained effort ratio (year two new positions / year one, at most 1; 52:27BBB-55(e))", shown(d["sustained_effort_ratio"])),
        FormLine("9", "Credit allowed for this period (credit years ending in it: "
                      + (", ".join(PERIOD_LABELS[o].lower() for o in detail.get("allows", [])) or "none") + ")", shown(allowed)),
        *(FormLine(f"9{'ab'[i]}", f"Carried over from earlier periods, {ORIGIN_LABELS[o].lower()}", v) for i, (o, v) in enumerate(carry.items())),
        FormLine("10", "Total credit available for this period (line 9 plus carryover)",
                 "pending" if allowed is None else _total(allowed, *carry.values())),
    ]
    return Part("III", "Calculation of the Economic Recovery Tax Credit", tuple(lines))


def part_four(claim, d: dict, i: int) -> Part:
    """Part IV: the allowable amount (L2 for CBT: 50% of the liability and the minimum-tax / AMA
    floor, less other credits applied before this one; L3 for insurers)."""
    p = d["periods"][i]
    det = p.get("detail", {})
    period = claim.periods[i]
    before = [c for c in period.other_credits if c.order == "before"]
    after = [c for c in period.other_credits if c.order == "after"]
    lines = [FormLine("11", "Tax liability otherwise due, before any credit", shown(det.get("liability")))]
    if det.get("limited"):
        lines += [
            FormLine("12", "50% of line 11", shown(det["cap_50_percent"])),
            FormLine("13", "Statutory minimum tax (N.J.S.A. 54:10A-5(e)) or alternative minimum assessment, the larger", shown(det["floor"])),
            FormLine("14", "Line 11 minus line 13", shown(det["liability_above_floor"])),
            FormLine("15", "Lesser of line 12 or line 14", str(min(Decimal(det["cap_50_percent"]), Decimal(det["liability_above_floor"])))),
        ]
    else:
        lines.append(FormLine("12-15", "Not applicable: no 50% limit or minimum tax for the tax on insurers (rule L3)", "n/a"))
    lines += [FormLine(f"16{'abcdefghijk'[j]}", f"{c.name} (applied before this credit)", money(c.amount)) for j, c in enumerate(before)]
    lines += [
        FormLine("16", "Tax credits taken on this return before this one, total (N.J.A.C. 18:7-3.17)", shown(det.get("other_credits_before"))),
        FormLine("17", "Line " + ("15" if det.get("limited") else "11") + " minus line 16; if less than zero, enter zero (room)", shown(p["room"])),
        FormLine("18", "Allowable credit for this period: the lesser of line 10 or line 17", shown(p.get("applied"))),
        FormLine("19", "Refundable part of the credit year one balance (overpayment, 52:27BBB-55(c)(2))", shown(p.get("refund"))),
        FormLine("20", "Forfeited: carried forward beyond the periods allowed (Form 313 instructions)", shown(p.get("forfeited"))),
    ]
    lines += [FormLine("", f"{c.name}: applied after this credit, does not reduce its room", money(c.amount)) for c in after]
    return Part("IV", "Calculation of the Allowable Credit Amount", tuple(lines))


def part_five(d: dict, i: int) -> Part:
    """Part V: the carryover schedule by year of origin (L4, L5, R1): for each credit year allowed
    up to this period, the credit, what each period applied, refunded and forfeited, and what remains."""
    periods = d["periods"][: i + 1]
    origin_period = {o: j for j, p in enumerate(periods) for o in p.get("detail", {}).get("allows", [])}
    cols = [o for o in ("year_one", "year_two") if o in origin_period]
    head = ("Line", *(f"{ORIGIN_LABELS[o]} (allowed for the period ending {periods[origin_period[o]]['end']})" for o in cols))
    rows = [("1 Credit", *(shown(d["credit"][o]) for o in cols))]
    for j in range(min(origin_period.values(), default=i + 1), i + 1):
        origins = periods[j].get("detail", {}).get("origins", {})
        for what in ("applied", "refund", "forfeited"):
            vals = [origins[o][what] if o in origins and origin_period[o] <= j else "" for o in cols]
            if what == "applied" or any(v not in ("", "0.00") for v in vals):
                rows.append((f"2 {what.capitalize()} in the period ending {periods[j]['end']}", *vals))
    closing = periods[i].get("detail", {}).get("origins", {})
    rows.append(("3 Remaining, carried forward", *(closing[o]["closing"] if o in closing else "0.00" for o in cols)))
    lines = (FormLine("4", "Total carried forward to the next period", shown(periods[i].get("carried_forward"))),)
    return Part("V", "Economic Recovery Tax Credit Carryover", lines, (head, *rows) if cols else (),
                "" if cols else "No credit has been allowed up to this period: nothing to carry over.")


def form313(claim, det, i: int) -> Form313:
    """The figures of Form 313 for the privilege period at index ``i`` of the determination."""
    d = as_dict(det)
    p = d["periods"][i]
    tp = claim.taxpayer
    return Form313(
        tax=tp.tax, taxpayer_name=tp.name, taxpayer_id=tp.id, period=f"{p['start']} to {p['end']}",
        eligible=d["eligible"],
        ineligible_because=tuple(f"{r['rule']} ({r['cite']}): {r['message']}" for r in d["ineligible_because"]),
        parts=(part_one(claim, d), part_two(d), part_three(d, p), part_four(claim, d, i), part_five(d, i)),
    )
