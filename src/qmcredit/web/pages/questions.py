"""The new-claim form's questions: every field of FORMAT.md's taxpayer, location and periods, the
options with their defaults, and Form 313 Part I's question 1. Each question carries its help
text citing the rule; the answers become a claim header that the one parser (``claim_from_dict``
through ``evaluate``) decides, and a problem's location is mapped back to the field it names."""

from __future__ import annotations

import re
from dataclasses import dataclass

from qmcredit.law.options import Options
from qmcredit.law.order import directors_list

PERIOD_ROWS = 4
CREDIT_ROWS = 3


@dataclass(frozen=True)
class Question:
    name: str    # the form field (and the claim's field after ``taxpayer.``, ``location.``, ``periods[i].``)
    label: str
    help: str    # what the answer changes, citing the rule
    kind: str = "text"  # text, money, date, month, flag (yes/no), choice
    choices: tuple[tuple[str, str], ...] = ()


TAXPAYER = (
    Question("taxpayer_id", "Federal employer identification number", "e.g. 22-3456789; the taxpayer the credit belongs to"),
    Question("taxpayer_name", "Taxpayer's name", "as shown on the return; printed on Form 313 and the worksheet"),
    Question("tax", "Tax", "E1: only the Corporation Business Tax and the tax on insurers' premiums take this credit", "choice",
             (("cbt", "Corporation Business Tax"), ("insurance_premiums", "Tax on insurers' premiums"))),
    Question("uez_benefit", "Does the taxpayer receive a benefit under the Urban Enterprise Zones Act?",
             "Form 313 Part I question 1; E3: a taxpayer receiving a UEZ benefit does not qualify (52:27BBB-55(f))", "flag"),
    Question("earlier_credit_period_start", "First month of an earlier credit period, if the taxpayer had one",
             "YYYY-MM; E4: a taxpayer takes one 24-month credit period (52:27BBB-55(a)); blank when none", "month"),
    Question("unitary_id", "New Jersey unitary ID, if a combined group files", "printed beside Form 313's combined-return oval; decides nothing"),
)
TAXPAYER_FIELDS = {q.name: {"taxpayer_id": "id", "taxpayer_name": "name"}.get(q.name, q.name) for q in TAXPAYER}

LOCATION = (
    Question("municipality", "Municipality", "E2: the qualified municipality (Camden)"),
    Question("address", "Street address", "Form 313 Part I question 5"),
    Question("operations_began", "Operations began", "Form 313 Part I question 6; W1: credit year one starts the month after", "date"),
    Question("operations_source", "Evidence of that date", "B2: e.g. certificate of occupancy 2004-117; recorded in the explanation"),
)

AS_OF = Question("as_of", "Payroll known up to", "blank when the payroll is complete; months after that day are unknown, not zero (FORMAT.md as_of)", "date")

PERIOD = (
    Question("start", "Starts", "V1: periods in date order, consecutive", "date"),
    Question("end", "Ends", "at most 53 weeks after the start (V1)", "date"),
    Question("liability", "Tax before credits", "L2: the tax otherwise due for the period", "money"),
    Question("minimum_tax", "Minimum tax", "L2, N.J.S.A. 54:10A-5(e); blank: derived from the answers below (L2c)", "money"),
)
PERIOD_MORE = (
    Question("nj_gross_receipts", "New Jersey gross receipts", "L2c: select the minimum tax's bracket", "money"),
    Question("s_corporation", "A New Jersey S corporation?", "L2c: 75% of the schedule from 2012; no AMA (L2b)", "flag"),
    Question("group_payroll_5m", "In a group with payroll of $5,000,000 or more?", "L2c: the $2,000 minimum", "flag"),
    Question("group_payroll", "The group's total payroll", "L2c: when given it answers the question above", "money"),
    Question("combined_group_member", "A member of a combined group?", "L2c: the $2,000 minimum from periods ending 2019-07-31; Form 313's oval", "flag"),
    Question("alternative_minimum_assessment", "Alternative minimum assessment", "L2, L2b: a floor besides the minimum tax, CBT periods beginning 2002-2006 only", "money"),
)
PERIOD_FIELDS = tuple(q.name for q in PERIOD + PERIOD_MORE)
CREDIT_FIELDS = ("code", "name", "amount", "order")
ORDERS = (("", "by option L2a"), ("before", "before this one"), ("after", "after this one"))


def more_open(values: dict, errors: dict, i: int) -> bool:
    """Whether period ``i``'s further questions are shown open: answered, or one of them refused."""
    pre = f"periods-{i}-"
    more = [pre + q.name for q in PERIOD_MORE] + [f"{pre}credits-{j}-{f}" for j in range(CREDIT_ROWS) for f in CREDIT_FIELDS]
    return any(values.get(n) or errors.get(n) for n in more)


def listed_credits() -> list[tuple[str, str]]:
    """The Director's list (L2a, N.J.A.C. 18:7-3.17(a)) as (code, "n. name") choices, this credit left out."""
    dl = directors_list()
    return [(str(c.number), f"{c.number}. {c.name}") for c in dl.credits if c.number != dl.this_credit]


@dataclass(frozen=True)
class OptionQuestion:
    name: str
    label: str
    choices: tuple[tuple[str, str], ...]  # (value as the form sends it, words); "" for a number typed

    @property
    def default(self) -> str:
        return form_value(Options.model_fields[self.name].default)


def form_value(v) -> str:
    """An option's value as the form sends it: true/false, "none" for null, a number or word as text."""
    return "none" if v is None else ("true" if v is True else "false" if v is False else str(v))


OPTIONS = (
    OptionQuestion("year_one_start", "W1: when credit year one starts",
                   (("next_month", "the month after operations began"), ("same_month_if_first_day", "that month, when they began on its first day"))),
    OptionQuestion("part_time_excludes_temporary", "P3: temporary or seasonal work makes a part-time position?",
                   (("false", "yes, it counts"), ("true", "no, it makes none"))),
    OptionQuestion("equivalent_hours_cap", "P4a: hours of one employee-month counted toward equivalents, at most",
                   (("none", "not capped (the statute's text)"), ("", "a number of hours:"))),
    OptionQuestion("whole_positions", "C1: new positions", (("false", "as the averages give them"), ("true", "rounded down to whole positions"))),
    OptionQuestion("insurer_limits", "L3: limits for insurers", (("none", "none (the statute's text)"), ("cbt", "the CBT 50% limit and floor too"))),
    OptionQuestion("s_corporation_group_minimum", "L2c: an S corporation's group or combined minimum",
                   (("reduced", "$1,500 (75% of $2,000)"), ("full", "$2,000"))),
    OptionQuestion("carryforward_periods", "L5: periods a credit may be carried forward",
                   (("form_313", "five (the Form 313 instructions)"), ("none", "no limit (the statute's text)"), ("", "a number of periods:"))),
    OptionQuestion("credit_order", "L2a: other credits without an order count",
                   (("form_313", "all before this one (Form 313 line 16)"), ("regulation", "by the Director's list (1-13 before, 15 on after)"))),
    OptionQuestion("refund", "R3: the refundable part of credit year one", (("true", "taken as a refund"), ("false", "carried forward instead"))),
    OptionQuestion("pay_period_allocation", "P6: a pay period's hours go to its months",
                   (("weekdays", "by weekdays"), ("calendar_days", "by calendar days"), ("end_month", "all to the month of its last day"))),
)


def field_names() -> list[str]:
    """Every field the form sends."""
    names = [q.name for q in TAXPAYER + LOCATION] + ["as_of"]
    for i in range(PERIOD_ROWS):
        names += [f"periods-{i}-{f}" for f in PERIOD_FIELDS]
        names += [f"periods-{i}-credits-{j}-{f}" for j in range(CREDIT_ROWS) for f in CREDIT_FIELDS]
    for o in OPTIONS:
        names += [f"option-{o.name}", f"option-{o.name}-number"]
    return names


def blank_values() -> dict[str, str]:
    """The form as first shown: the options at their defaults, the Part I question unanswered."""
    values = {n: "" for n in field_names()} | {"municipality": "Camden", "tax": "cbt"}
    return values | {f"option-{o.name}": o.default for o in OPTIONS}


def _flag(v: str):
    return {"yes": True, "no": False}.get(v, v or None)  # anything else goes to the parser, which names it


def _period(values: dict, i: int) -> tuple[dict, list[int]]:
    kinds = {q.name: q.kind for q in PERIOD + PERIOD_MORE}
    p = {}
    for f in PERIOD_FIELDS:
        v = values[f"periods-{i}-{f}"]
        if kinds[f] == "flag":
            if v == "yes":
                p[f] = True
        elif v:
            p[f] = v
    credits, rows = [], []
    for j in range(CREDIT_ROWS):
        c = {f: values[f"periods-{i}-credits-{j}-{f}"] for f in CREDIT_FIELDS}
        if not any(c.values()):
            continue
        credit = {"name": c["name"] or dict(listed_credits()).get(c["code"], "").split(". ", 1)[-1], "amount": c["amount"]}
        if c["code"]:
            credit["code"] = int(c["code"]) if c["code"].isdigit() else c["code"]
        if c["order"]:
            credit["order"] = c["order"]
        credits.append(credit)
        rows.append(j)
    if credits:
        p["other_credits"] = credits
    return p, rows


NOT_GIVEN = object()


def option_value(values: dict, o: OptionQuestion):
    """The option's value as the claim writes it; NOT_GIVEN for the default or nothing sent."""
    v, number = values[f"option-{o.name}"], values[f"option-{o.name}-number"]
    if v == "":
        return NOT_GIVEN if number == "" else int(number) if number.isdigit() else number
    if v == o.default:
        return NOT_GIVEN
    return {"none": None, "true": True, "false": False}.get(v, v)


def header_from_form(values: dict[str, str]) -> tuple[dict, list[tuple[int, list[int]]]]:
    """The claim header the form describes, and for each period given its form row and the rows of
    its other credits (for naming a problem's field)."""
    taxpayer = {TAXPAYER_FIELDS[q.name]: values[q.name] for q in TAXPAYER if values[q.name]}
    taxpayer["tax"] = values["tax"] or "cbt"
    if values["uez_benefit"] in ("yes", "no"):
        taxpayer["uez_benefit"] = _flag(values["uez_benefit"])
    doc = {"format": "qmcredit.claim/1", "taxpayer": taxpayer,
           "location": {"municipality": values["municipality"], "address": values["address"],
                        "operations_began": values["operations_began"] or None, "operations_source": values["operations_source"]},
           "periods": [], "options": {}}
    rows = []
    for i in range(PERIOD_ROWS):
        p, credit_rows = _period(values, i)
        if p:
            doc["periods"].append(p)
            rows.append((i, credit_rows))
    for o in OPTIONS:
        v = option_value(values, o)
        if v is not NOT_GIVEN:
            doc["options"][o.name] = v
    if values["as_of"]:
        doc["as_of"] = values["as_of"]
    return doc, rows


def unanswered(values: dict[str, str]) -> list[dict]:
    """Form 313 Part I question 1 must be answered, not assumed (issue 15)."""
    if values["uez_benefit"] in ("yes", "no"):
        return []
    return [{"location": "taxpayer.uez_benefit", "field": "uez_benefit",
             "message": "answer yes or no: does the taxpayer receive a benefit under the Urban Enterprise Zones Act? "
                        "(Form 313 Part I question 1, E3)"}]


CLAIM_FIELDS = {**{f"taxpayer.{v}": k for k, v in TAXPAYER_FIELDS.items()},
                **{f"location.{q.name}": q.name for q in LOCATION}, "as_of": "as_of"}


def field_of(location: str, rows: list[tuple[int, list[int]]], filename: str) -> str:
    """The form field a problem's location names ("periods[1].liability" -> "periods-3-liability"
    when the second period came from the fourth row; "options.refund" -> "option-refund"); payroll
    rows and the file go to "payroll"."""
    if location in CLAIM_FIELDS:
        return CLAIM_FIELDS[location]
    if location.startswith("options."):
        name = location.split(".")[1]
        return f"option-{name}" if any(o.name == name for o in OPTIONS) else "general"
    m = re.fullmatch(r"periods\[(\d+)\](?:\.other_credits\[(\d+)\])?\.(\w+)", location)
    if m and int(m[1]) < len(rows):
        row, credit_rows = rows[int(m[1])]
        if m[2] is not None and int(m[2]) < len(credit_rows) and m[3] in CREDIT_FIELDS:
            return f"periods-{row}-credits-{credit_rows[int(m[2])]}-{m[3]}"
        if m[2] is None and m[3] in PERIOD_FIELDS:
            return f"periods-{row}-{m[3]}"
    if location.startswith("payroll") or (filename and location.startswith(filename)):
        return "payroll"
    return "periods" if location.startswith("periods") else "general"
