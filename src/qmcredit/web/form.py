"""The figures of Form 313 ("Economic Recovery Tax Credit", N.J. Division of Taxation) for one
privilege period, built on ``qmcredit.form313`` (the core's Form 313 lines) with the determination's checks,
employee-months and ledger history.

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

from ..determination import Determination
from ..form313 import form313
from ..money import money
from .figures import PERIOD_LABELS, shown

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


def _total(*amounts: str | None) -> str:
    return str(sum((Decimal(a) for a in amounts if a is not None), Decimal("0.00")))


def _employee_rows(d: dict) -> list[dict]:
    em = next((e for e in d.get("explanation", []) if e.get("figure") == "employee_months"), None)
    return [] if em is None else em["rows"]


def part_one(f: dict, d: dict) -> Part:
    """Part I: the form's preliminary questions (E2-E4; P1 and P2 from how the payroll was counted;
    question 2 from the averages of subsection e.), questions 5 and 6, and every eligibility check."""
    i1 = f["part_i"]
    statuses = {r["status"] for r in _employee_rows(d)}
    temp = "; some temporary or seasonal hours were recorded and not counted as full-time" if statuses & {"temporary_not_part_time", "temporary_excluded"} else ""
    owners = "; some owners or relatives were recorded and excluded" if statuses & {"owner", "owner_relative"} else ""
    checks = tuple((c["rule"], c["cite"], c["condition"], "passed" if c["passed"] else "FAILED", c["message"]) for c in d.get("checks", []))
    return Part("I", "Taxpayer and Employee Preliminary Qualifications", (
        FormLine("1", "Is the taxpayer receiving a benefit under the New Jersey Urban Enterprise Zones Act?", i1["receiving_uez_benefit"].upper()),
        FormLine("2", "Did the new full-time positions at the qualifying location exist prior to credit year one? "
                      "(measured by the increase of the average over the base period, 52:27BBB-55(e))",
                 i1["new_positions_existed_before_year_one"].upper()),
        FormLine("3", f"Is a full-time position counted here filled on a temporary or seasonal basis? (rule P2{temp})", "NO"),
        FormLine("4", f"Is an employee counted here an owner, or an owner's spouse, dependant, ancestor or descendant? (rule P1{owners})", "NO"),
        FormLine("5", "Address of the qualifying location of the new or expanded operations",
                 ", ".join(x for x in (i1["location"], i1["municipality"]) if x)),
        FormLine("6", "Date the new or expanded operations began at the qualifying location"
                      + (f" (source: {i1['operations_source']})" if i1["operations_source"] else ""), i1["operations_began"]),
        FormLine("6a", "Credit year one", i1["credit_year_one"]),
        FormLine("6b", "Credit year two", i1["credit_year_two"]),
        FormLine("6c", "Earlier 24-month credit period (52:27BBB-55(d))", i1["earlier_credit_period"]),
    ), (("Rule", "Cite", "Condition", "Result", "Why"), *checks) if checks else ())


def part_two(f: dict, d: dict) -> Part:
    """Part II: each employee whose hours count in a credit year (P2 full-time or P4 equivalents),
    with the first and last month counted, and the average positions of the three periods (P5)."""
    spans: dict[str, list] = {}
    for r in _employee_rows(d):
        if r["status"] in COUNTED and r["period"] in ("year_one", "year_two"):
            s = spans.setdefault(r["employee_id"], [r["month"], r["month"], 0, 0])
            s[0], s[1] = min(s[0], r["month"]), max(s[1], r["month"])
            s[2 if r["status"] == "full_time" else 3] += 1
    table = (("Employee", "From", "To", "Months full-time", "Months part-time (equivalents)"),
             *((e, a, b, str(ft), str(pt)) for e, (a, b, ft, pt) in sorted(spans.items())))
    ii, w = f["part_ii"], d["windows"]
    lines = tuple(
        FormLine(no, f"Average full-time positions and equivalents, {PERIOD_LABELS[k].lower()} {w[k]['start']} to {w[k]['end']}", shown(ii[f"average_{k}"]))
        for no, k in (("a", "base"), ("b", "year_one"), ("c", "year_two"))
    )
    return Part("II", "Qualifying Employee Information", lines, table,
                "Employees whose hours count toward the positions of credit year one or two (rules P2, P4).")


def part_three(f: dict) -> Part:
    """Part III: the credits of subsection a. and what this period has available (L1, L4)."""
    iii = f["part_iii"]
    carry = {o["origin"]: o["opening"] for o in f["part_v"] if o["origin"] not in iii["allows"]}
    y1, y2 = iii["year_one"], iii["year_two"]
    return Part("III", "Calculation of the Economic Recovery Tax Credit", (
        FormLine("7", f"New full-time positions in credit year one: {shown(y1['new_positions'])} x ${y1['amount_per_position']}", shown(y1["credit"])),
        FormLine("8", f"New full-time positions in credit year two: {shown(y2['new_positions'])} x ${y2['amount_per_position']}", shown(y2["credit"])),
        FormLine("9", "Credit allowed for this period (credit years ending in it: "
                      + (", ".join(PERIOD_LABELS[o].lower() for o in iii["allows"]) or "none") + ")", shown(iii["allowed_this_period"])),
        *(FormLine(f"9{'ab'[k]}", f"Carried over from earlier periods, {ORIGIN_LABELS[o].lower()}", v) for k, (o, v) in enumerate(carry.items())),
        FormLine("10", "Total credit available for this period (line 9 plus carryover)",
                 "pending" if iii["allowed_this_period"] is None else _total(iii["allowed_this_period"], *carry.values())),
    ))


def part_four(claim, f: dict) -> Part:
    """Part IV: the allowable amount (L2 for CBT: 50% of the liability and the minimum-tax / AMA
    floor, less other credits applied before this one, N.J.A.C. 18:7-3.17; L3 for insurers)."""
    iv = f["part_iv"]
    period = claim.periods[f["index"]]
    before = [c for c in period.other_credits if c.order == "before"]
    after = [c for c in period.other_credits if c.order == "after"]
    lines = [FormLine("11", "Tax liability otherwise due, before any credit", iv["tax_liability"])]
    if iv["limits_apply"]:
        lines += [
            FormLine("12", "50% of line 11", iv["fifty_percent_of_liability"]),
            FormLine("13", "Statutory minimum tax (N.J.S.A. 54:10A-5(e)) or alternative minimum assessment, the larger", iv["minimum_tax_floor"]),
            FormLine("14", "Line 11 minus line 13", iv["liability_less_floor"]),
            FormLine("15", "Lesser of line 12 or line 14", str(min(Decimal(iv["fifty_percent_of_liability"]), Decimal(iv["liability_less_floor"])))),
        ]
    else:
        lines.append(FormLine("12-15", "Not applicable: no 50% limit or minimum tax for the tax on insurers (rule L3)", "n/a"))
    lines += [FormLine(f"16{'abcdefghijk'[j]}", f"{c.name} (applied before this credit)", money(c.amount)) for j, c in enumerate(before)]
    totals = f["totals"]
    lines += [
        FormLine("16", "Tax credits taken on this return before this one, total", iv["other_credits_before"]),
        FormLine("17", "Line " + ("15" if iv["limits_apply"] else "11") + " minus line 16; if less than zero, enter zero", iv["allowable_credit"]),
        FormLine("18", "Allowable credit applied for this period: the lesser of line 10 or line 17", shown(iv["credit_applied"])),
        FormLine("19", "Refundable part of the credit year one balance (overpayment, 52:27BBB-55(c)(2))", shown(totals["refund"])),
        FormLine("20", "Forfeited: carried forward beyond the periods allowed (Form 313 instructions)", shown(totals["forfeited"])),
    ]
    lines += [FormLine("", f"{c.name}: applied after this credit, does not reduce its room", money(c.amount)) for c in after]
    return Part("IV", "Calculation of the Allowable Credit Amount", tuple(lines))


def part_five(forms: list[dict], i: int) -> Part:
    """Part V: the carryover schedule by year of origin (L4, L5, R1): for each credit year allowed
    up to this period, the credit, what each period applied, refunded and forfeited, and what remains."""
    upto = forms[: i + 1]
    origin_period = {o: j for j, f in enumerate(upto) for o in f["part_iii"]["allows"]}
    cols = [o for o in ("year_one", "year_two") if o in origin_period]
    head = ("Line", *(f"{ORIGIN_LABELS[o]} (allowed for the period ending {upto[origin_period[o]]['end']})" for o in cols))
    rows = [("1 Credit", *(shown(upto[origin_period[o]]["part_iii"][o]["credit"]) for o in cols))]
    for j in range(min(origin_period.values(), default=i + 1), i + 1):
        origins = {o["origin"]: o for o in upto[j]["part_v"]}
        for what in ("applied", "refund", "forfeited"):
            vals = [origins[o][what] if o in origins else "" for o in cols]
            if what == "applied" or any(v not in ("", "0.00") for v in vals):
                rows.append((f"2 {what.capitalize()} in the period ending {upto[j]['end']}", *vals))
    closing = {o["origin"]: o["carryover"] for o in upto[i]["part_v"]}
    rows.append(("3 Remaining, carried forward", *(closing.get(o, "pending" if upto[i]["pending"] else "0.00") for o in cols)))
    lines = (FormLine("4", "Total carried forward to the next period", shown(upto[i]["totals"]["carried_forward"])),)
    return Part("V", "Economic Recovery Tax Credit Carryover", lines, (head, *rows) if cols else (),
                "" if cols else "No credit has been allowed up to this period: nothing to carry over.")


def form_for_period(claim, det: Determination, i: int) -> Form313:
    """The figures of Form 313 for the privilege period at index ``i``, from ``qmcredit.form313``
    plus the determination's checks, employee-months and ledger history."""
    forms = form313(claim, det)
    d = det.to_dict(explain=True)
    f = forms[i]
    i1 = f["part_i"]
    return Form313(
        tax=i1["tax"], taxpayer_name=i1["taxpayer"], taxpayer_id=i1["taxpayer_id"], period=f"{f['start']} to {f['end']}",
        eligible=d["eligible"],
        ineligible_because=tuple(f"{r['rule']} ({r['cite']}): {r['message']}" for r in d["ineligible_because"]),
        parts=(part_one(f, d), part_two(f, d), part_three(f), part_four(claim, f), part_five(forms, i)),
    )
